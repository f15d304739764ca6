import { guidelineEntry } from '@baton/support-desk-models';
import { describe, expect, it } from 'vitest';

describe('guidelineEntry', () => {
  it("gives the value the guideline has the agent type in, into the action's own slot", () => {
    expect(guidelineEntry('status_service_added', 'update-account', '')).toEqual({ account_slotval: 'remove service' });
    expect(guidelineEntry('mistimed_billing_never_bought', 'update-order', '')).toEqual({
      order_slotval: 'give credit',
    });
    expect(guidelineEntry('bad_price_yesterday', 'record-reason', 'it was cheaper at another store')).toEqual({
      reason_slotval: 'yesterday',
    });
  });

  it("records the one of the guideline's reasons the customer named, and none they did not", () => {
    expect(
      guidelineEntry('status_service_added', 'record-reason', 'My spouse noticed a premium service on the bill'),
    ).toEqual({ reason_slotval: 'spouse' });
    expect(guidelineEntry('status_service_added', 'record-reason', 'It is jwu15425@email.com')).toEqual({});
    expect(guidelineEntry('status_service_added', 'offer-refund', 'I saw it in the news')).toEqual({});
    expect(guidelineEntry('manage', 'update-order', 'change my address')).toEqual({});
  });
});
