/**
 * What the demo customers say: for each subflow the desk handles, a few openings in plain customer
 * words (written for Baton's demo, not taken from any dataset). `scripts/generateDemo.ts` turns them
 * into whole conversations.
 */

/** One subflow's scene: the customer's openings, and optional extras the customer says in it. */
export interface Scene {
  flow: string;
  subflow: string;
  /** Opening messages; `{product}` is replaced by an item, `{brand}` by a brand. */
  openings: readonly string[];
  /** How many demo conversations of this subflow (default 1). */
  count?: number;
}

/** The demo's first scenes, eight conversations per flow. */
export const SCENES: readonly Scene[] = [
  // account_access
  {
    flow: 'account_access',
    subflow: 'recover_username',
    count: 3,
    openings: [
      "I can't remember the username I signed up with, so I can't log in.",
      'I forgot my username for the site. Can you look it up for me?',
      'Trying to sign in but the login page keeps saying my username is wrong and I honestly forgot what it was.',
    ],
  },
  {
    flow: 'account_access',
    subflow: 'recover_password',
    count: 3,
    openings: [
      'I forgot my password and I cannot log in to my account.',
      'My password is not working anymore and I am locked out of my account. Can I get a new one?',
      "I need to reset my password, I can't get into my account to see my orders.",
    ],
  },
  {
    flow: 'account_access',
    subflow: 'reset_2fa',
    count: 2,
    openings: [
      'The two-factor code never arrives on my phone so I am stuck at the login screen.',
      'I got a new phone and now the two factor authentication will not let me log in. Can you reset it?',
    ],
  },
  // manage_account
  {
    flow: 'manage_account',
    subflow: 'status_service_added',
    count: 3,
    openings: [
      'This is Crystal Minh. A premium service was added to my account without asking me, and now I am being charged for the service.',
      'Somebody added an extra service to my account and now I see a charge for it. I did not ask for that service.',
      'A service got added to my account without my permission and I was billed for it. Please remove the service.',
    ],
  },
  {
    flow: 'manage_account',
    subflow: 'manage_change_address',
    count: 3,
    openings: [
      'I moved recently and I need to change the address on my account.',
      'Can you update my account with my new home address? I just moved.',
      'The address on my account profile is old, I want to change it to where I live now.',
    ],
  },
  {
    flow: 'manage_account',
    subflow: 'manage_change_phone',
    count: 2,
    openings: [
      'Can you update the phone number on my account? My old number is disconnected.',
      'I got a new phone number and want to change it on my account.',
    ],
  },
  // order_issue
  {
    flow: 'order_issue',
    subflow: 'manage_cancel',
    count: 3,
    openings: [
      'I need to cancel an order I placed yesterday, I ordered the wrong thing.',
      'Please cancel my order, I changed my mind and want my money back.',
      'Is it too late to cancel the order I just placed? I do not want it anymore.',
    ],
  },
  {
    flow: 'order_issue',
    subflow: 'status_delivery_time',
    count: 3,
    openings: [
      'I placed an order a few days ago and I want to know when the order will be delivered.',
      'When will my order arrive? I need it before the weekend.',
      'How long until my order gets here? The order page does not show a delivery date.',
    ],
  },
  {
    flow: 'order_issue',
    subflow: 'status_payment_method',
    count: 2,
    openings: [
      'I paid for my order with my debit card but the order says paypal. Can you fix the payment on the order?',
      'The wrong payment method is on my order, I meant to use my credit card.',
    ],
  },
  // product_defect
  {
    flow: 'product_defect',
    subflow: 'refund_initiate',
    count: 3,
    openings: [
      'I want my money back for the {product} I bought, it fell apart after one wear.',
      'The {product} I received is damaged and I would like a refund please.',
      'The zipper on my {product} broke the first day. I want a refund for it.',
    ],
  },
  {
    flow: 'product_defect',
    subflow: 'refund_status',
    count: 2,
    openings: [
      'I returned a {product} two weeks ago and still have not seen my refund. What is the status of my refund?',
      'Where is my refund? I sent back a defective {product} a while ago.',
    ],
  },
  {
    flow: 'product_defect',
    subflow: 'return_size',
    count: 3,
    openings: [
      'The {product} I ordered is the wrong size, way too small. How do I return it?',
      'I need to return a {product}, it is two sizes too big.',
      'The {product} does not fit at all. Can I send it back for a return?',
    ],
  },
  // purchase_dispute
  {
    flow: 'purchase_dispute',
    subflow: 'bad_price_competitor',
    count: 3,
    openings: [
      'I just saw the same {product} for a lot less at another store. Can you match the competitor price?',
      'A competitor sells this {product} cheaper than you do. I want a price match.',
      'Why is your price so much higher than the other shop down the street? Do you match prices?',
    ],
  },
  {
    flow: 'purchase_dispute',
    subflow: 'promo_code_invalid',
    count: 3,
    openings: [
      'The promo code I got by email says invalid when I try it at checkout.',
      'My discount code is not being accepted, it keeps saying the promo code is invalid.',
      'I have a coupon code from your newsletter but checkout rejects the code.',
    ],
  },
  {
    flow: 'purchase_dispute',
    subflow: 'out_of_stock_one_item',
    count: 2,
    openings: [
      'The {product} I want is sold out in my size. Can you get me one anyway?',
      'Your site says the {product} is out of stock. Will it come back or can you order it for me?',
    ],
  },
  // shipping_issue
  {
    flow: 'shipping_issue',
    subflow: 'status',
    count: 2,
    openings: [
      'My package has not arrived yet. Where is my shipment?',
      'Can you tell me where my package is? The tracking has not moved in days.',
    ],
  },
  {
    flow: 'shipping_issue',
    subflow: 'manage',
    count: 2,
    openings: [
      'I need to change the shipping address for a package that has not shipped yet.',
      'Can my shipment go to my work address instead of home?',
    ],
  },
  {
    flow: 'shipping_issue',
    subflow: 'missing',
    count: 2,
    openings: [
      'My package came today but the {product} was missing from the box.',
      'The box arrived but one item is missing from my shipment.',
    ],
  },
  {
    flow: 'shipping_issue',
    subflow: 'cost',
    count: 2,
    openings: [
      'Why did I pay so much for shipping? The shipping cost was way more than the site said.',
      'I was charged for shipping even though I should have gotten free shipping.',
    ],
  },
  // single_item_query
  {
    flow: 'single_item_query',
    subflow: 'boots',
    count: 2,
    openings: [
      'Are the {brand} boots waterproof? I walk a lot in the rain.',
      'How should I clean suede boots without ruining them?',
    ],
  },
  {
    flow: 'single_item_query',
    subflow: 'shirt',
    count: 2,
    openings: [
      'Does the {brand} shirt shrink in the dryer?',
      'What material is the {brand} shirt made of? Is it pure cotton?',
    ],
  },
  {
    flow: 'single_item_query',
    subflow: 'jeans',
    count: 2,
    openings: ['Do the {brand} jeans run small or true to size?', 'How long is the inseam on the {brand} jeans?'],
  },
  {
    flow: 'single_item_query',
    subflow: 'jacket',
    count: 2,
    openings: ['Is the {brand} jacket warm enough for winter?', 'Can the {brand} jacket go in the washing machine?'],
  },
  // storewide_query
  {
    flow: 'storewide_query',
    subflow: 'pricing',
    count: 2,
    openings: [
      'Do you offer price adjustments if something goes on sale later?',
      'How do your prices compare, do you ever have sales on everything?',
    ],
  },
  {
    flow: 'storewide_query',
    subflow: 'membership',
    count: 2,
    openings: [
      'What perks do gold members get compared to silver?',
      'How do I become a member and what are the benefits of membership?',
    ],
  },
  {
    flow: 'storewide_query',
    subflow: 'timing',
    count: 2,
    openings: [
      'What hours is your customer service open on weekends?',
      'How long does it usually take for a new item to be restocked?',
    ],
  },
  {
    flow: 'storewide_query',
    subflow: 'policy',
    count: 2,
    openings: [
      'What is your return policy on items bought on sale?',
      'Is there a time limit on exchanges? What does the store policy say?',
    ],
  },
  // subscription_inquiry
  {
    flow: 'subscription_inquiry',
    subflow: 'status_due_amount',
    count: 3,
    openings: [
      'How much do I owe on my subscription this month?',
      'What is the amount due on my annual subscription bill?',
      'Can you tell me how much my subscription payment will be?',
    ],
  },
  {
    flow: 'subscription_inquiry',
    subflow: 'manage_dispute_bill',
    count: 3,
    openings: [
      'My subscription bill is higher than it should be, I want to dispute the bill.',
      'I was charged twice for my subscription this month.',
      'The subscription fee on my bill is wrong and I want that charge refunded.',
    ],
  },
  {
    flow: 'subscription_inquiry',
    subflow: 'manage_pay_bill',
    count: 2,
    openings: [
      'I would like to pay my subscription bill now, can you take the payment?',
      'Can I pay off my subscription balance over the chat?',
    ],
  },
  // troubleshoot_site
  {
    flow: 'troubleshoot_site',
    subflow: 'credit_card',
    count: 2,
    openings: [
      'The website keeps rejecting my credit card at checkout even though the card is fine.',
      'Every time I enter my card number the site says there is an error with the card.',
    ],
  },
  {
    flow: 'troubleshoot_site',
    subflow: 'shopping_cart',
    count: 2,
    openings: [
      'I cannot add anything to my shopping cart, the button does nothing.',
      'Items keep disappearing from my cart on the website.',
    ],
  },
  {
    flow: 'troubleshoot_site',
    subflow: 'search_results',
    count: 2,
    openings: [
      'The search on your website shows nothing, even when I type something simple.',
      'When I search the site for {product} I get results that have nothing to do with it.',
    ],
  },
  {
    flow: 'troubleshoot_site',
    subflow: 'slow_speed',
    count: 2,
    openings: [
      'Your website is super slow today, pages take forever to load.',
      'The site is so slow that it times out before I can check out.',
    ],
  },
];

/**
 * Scenes added after the first 80 conversations, generated after them so that those keep their
 * details (ids, names, random draws). A duplicate charge on an order is a purchase dispute (a charge
 * for a purchase never made); on a subscription it is a bill dispute (`manage_dispute_bill` above).
 */
export const EXTRA_SCENES: readonly Scene[] = [
  {
    flow: 'purchase_dispute',
    subflow: 'mistimed_billing_never_bought',
    count: 2,
    openings: [
      'I was charged twice for my order, but I only bought it once.',
      'There is a second charge on my card for an order I never placed.',
    ],
  },
];

/** A second sentence a customer may add, saying what the matter is about in general words, by flow. */
export const FLOW_CONTEXT: Readonly<Record<string, readonly string[]>> = {
  account_access: [
    'I just want to be able to log in to my account again.',
    'Being locked out of my account is really annoying.',
    'I need to get back into my account to sign in.',
  ],
  manage_account: [
    'It is about the settings on my account.',
    'I need a change made to my account details.',
    'Something on my account profile is not right.',
  ],
  order_issue: [
    'It is about an order I placed.',
    'The order number is in my email if you need it.',
    'I need help with my order please.',
  ],
  product_defect: [
    'The item is defective, so I want to return it for a refund.',
    'I would like to return the item and get my money back.',
    'It is a faulty product and I want a return or refund.',
  ],
  purchase_dispute: [
    'I think I was overcharged on this purchase.',
    'The price I paid does not seem fair.',
    'I want to dispute what I was charged for this purchase.',
  ],
  shipping_issue: [
    'It is about the delivery of my package.',
    'The shipping on this has been a mess.',
    'I am waiting on a shipment and need help with the delivery.',
  ],
  single_item_query: [
    'I have a question about one of your products before I buy it.',
    'Just a quick product question before I order.',
    'I am thinking about buying it and wanted to know.',
  ],
  storewide_query: [
    'Just a general question about the store.',
    'I was curious about how your store works.',
    'It is a general question about shopping with you.',
  ],
  subscription_inquiry: [
    'It is about my subscription.',
    'I have a question about my subscription and its bill.',
    'My subscription renews every year.',
  ],
  troubleshoot_site: [
    'Something is wrong with your website.',
    'The website is not working properly for me.',
    'I think the site has a bug.',
  ],
};
