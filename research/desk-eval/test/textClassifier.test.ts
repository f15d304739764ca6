import { InvalidInputError } from '@baton/core';
import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import {
  characterNgrams,
  createTextClassifier,
  customerMessages,
  forgetTextFeatures,
  hasContent,
  LinearSvmClassifier,
  LogisticRegressionClassifier,
  loadConversations,
  NaiveBayesClassifier,
  openingText,
  ROUTER_CLASSIFIER,
  routerTrainingTexts,
  textFeatures,
} from '@baton/support-desk-models';
import { describe, expect, it } from 'vitest';
import { crossValidationFolds } from '../src/folds.js';

describe('textFeatures', () => {
  it('keeps stemmed content words and adjacent pairs, and finds nothing in a greeting', () => {
    expect(textFeatures('I was charged twice')).toEqual(expect.arrayContaining(['charg', 'twice', 'charg_twice']));
    expect(textFeatures('Hi there! Hello?')).toEqual([]);
    expect(hasContent('hi')).toBe(false);
    expect(hasContent('my jeans are torn')).toBe(true);
  });

  it('gives a text seen before the same features, whatever a caller did to the array it got, and again after forgetTextFeatures', () => {
    const first = textFeatures('My refund never arrived');
    const expected = [...first];
    first.push('tampered');
    expect(textFeatures('My refund never arrived')).toEqual(expected);
    expect(characterNgrams('My refund never arrived', { min: 3, max: 3 })).toContain('#ref');
    forgetTextFeatures();
    expect(textFeatures('My refund never arrived')).toEqual(expected);
    expect(textFeatures('my refund never arrived!')).toEqual(expected);
  });
});

describe('characterNgrams', () => {
  it('takes the n-grams inside each word, padded at its ends, and none from a greeting', () => {
    expect(characterNgrams('my bill', { min: 3, max: 3 })).toEqual(['# my', '#my ', '# bi', '#bil', '#ill', '#ll ']);
    expect(characterNgrams('Hello there!', { min: 2, max: 5 })).toEqual([]);
  });
});

const SMALL_TRAINING = [
  { id: 'a', text: 'I forgot my password', label: 'account_access' },
  { id: 'b', text: 'Where is my package?', label: 'shipping_issue' },
  { id: 'c', text: 'reset my password please', label: 'account_access' },
  { id: 'd', text: 'my package is late', label: 'shipping_issue' },
  { id: 'e', text: 'the login page rejects my new password', label: 'account_access' },
  { id: 'f', text: 'tracking says the parcel was delayed', label: 'shipping_issue' },
];

describe('calibration', () => {
  // 200 texts of two labels (two of one, then two of the other), each its own group: a fold of 2 holds out 100 of them.
  const texts = Array.from({ length: 200 }, (_, i) =>
    i % 4 < 2
      ? {
          id: `p${i}`,
          text: `my password ${['reset', 'forgot', 'locked', 'expired'][i % 4]} number ${i}`,
          label: 'account_access',
        }
      : {
          id: `s${i}`,
          text: `my package ${['late', 'lost', 'delayed', 'missing'][i % 4]} number ${i}`,
          label: 'shipping_issue',
        },
  );

  it('trains one fold model when the first fold holds out enough texts, and the next only when it does not', () => {
    const one = new NaiveBayesClassifier(texts, { calibrationFolds: 2, calibrationTexts: 60 });
    expect(one.calibration.folds).toBe(1);
    expect(one.calibration.texts).toBeGreaterThanOrEqual(60);
    const exact = new LinearSvmClassifier(texts, { calibrationFolds: 2, calibrationTexts: 100 });
    expect(exact.calibration).toEqual({ folds: 1, texts: 100 });
    const two = new NaiveBayesClassifier(texts, { calibrationFolds: 2, calibrationTexts: 150 });
    expect(two.calibration).toEqual({ folds: 2, texts: 150 });
    const none = new NaiveBayesClassifier(texts, { calibrationFolds: 0 });
    expect(none.calibration).toEqual({ folds: 0, texts: 0 });
    expect(none.temperature).toBe(1);
  });
});

describe('NaiveBayesClassifier', () => {
  it('with character n-grams, recognises a misspelt word that words alone do not know', () => {
    const words = new NaiveBayesClassifier(SMALL_TRAINING, { calibrationFolds: 0 });
    const chars = new NaiveBayesClassifier(SMALL_TRAINING, {
      calibrationFolds: 0,
      charNgrams: { min: 2, max: 5 },
      smoothing: 0.25,
      presence: false,
    });
    expect(words.classify('pasword')).toBeUndefined();
    expect(chars.classify('pasword')?.label).toBe('account_access');
    expect(chars.classify('packages')?.label).toBe('shipping_issue');
    expect(chars.classify('hi there')).toBeUndefined();
  });

  it('gives no label to a text without content, and probabilities that sum to 1', () => {
    const classifier = new NaiveBayesClassifier(SMALL_TRAINING);
    expect(classifier.classify('hello')).toBeUndefined();
    const result = classifier.classify('cannot remember my password')!;
    expect(result.label).toBe('account_access');
    expect(result.probabilities.reduce((sum, p) => sum + p.probability, 0)).toBeCloseTo(1, 6);
    expect(result.confidence).toBe(result.probabilities[0]!.probability);
  });

  it('answers its only label when it learned one, and refuses two labels with too few words by a named error', () => {
    const single = new NaiveBayesClassifier([{ id: 'a', text: 'password', label: 'account_access' }]);
    expect(single.classify('my parcel is late')).toMatchObject({ label: 'account_access', confidence: 1 });
    expect(single.classify('hi')).toBeUndefined();
    expect(new NaiveBayesClassifier([]).classify('password')).toBeUndefined();
    expect(
      () =>
        new NaiveBayesClassifier([
          { id: 'a', text: 'password', label: 'x' },
          { id: 'b', text: 'package', label: 'y' },
        ]),
    ).toThrow(InvalidInputError);
    expect(
      () =>
        new NaiveBayesClassifier([
          { id: 'a', text: 'password', label: 'x' },
          { id: 'b', text: 'package', label: 'y' },
        ]),
    ).toThrow(/at least 2 labels and 10 distinct words/);
  });

  it('is calibrated on held-out demo conversations: confident answers are right more often than unsure ones, and the mean confidence is near the accuracy', async () => {
    const conversations = await loadConversations(DEMO_DATA_FILE);
    const scored: Array<{ confidence: number; right: boolean }> = [];
    for (const { train, test } of crossValidationFolds(conversations)) {
      const classifier = new NaiveBayesClassifier(train.flatMap(routerTrainingTexts), ROUTER_CLASSIFIER);
      expect(classifier.temperature).toBeGreaterThan(0);
      for (const c of test) {
        const result = classifier.classify(customerMessages(c)[0] ?? '');
        if (result !== undefined) scored.push({ confidence: result.confidence, right: result.label === c.flow });
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    const accuracy = mean(scored.map((s) => (s.right ? 1 : 0)));
    const confidence = mean(scored.map((s) => s.confidence));
    expect(Math.abs(confidence - accuracy)).toBeLessThan(0.15);
    const sure = scored.filter((s) => s.confidence >= 0.8);
    const unsure = scored.filter((s) => s.confidence < 0.5);
    expect(mean(sure.map((s) => (s.right ? 1 : 0)))).toBeGreaterThan(mean(unsure.map((s) => (s.right ? 1 : 0))));
  });

  it('holds the texts of one group out together when it calibrates: a copy of a held-out text in training would make it overconfident', async () => {
    const conversations = await loadConversations(DEMO_DATA_FILE);
    const twice = conversations.flatMap((c) =>
      [0, 1].map((copy) => ({ id: `${c.id}-${copy}`, text: openingText(c), label: c.flow, group: c.id })),
    );
    const grouped = new NaiveBayesClassifier(twice, ROUTER_CLASSIFIER);
    const ungrouped = new NaiveBayesClassifier(
      twice.map(({ group: _, ...text }) => text),
      ROUTER_CLASSIFIER,
    );
    // Ungrouped, each held-out text's copy was learned: it looks always right, and the fitted temperature sharpens.
    expect(ungrouped.temperature).toBeLessThan(grouped.temperature);
  });

  it('learns the texts marked calibrate: false in every calibration fold and never scores them', async () => {
    const conversations = await loadConversations(DEMO_DATA_FILE);
    const once = conversations.map((c) => ({ id: c.id, text: openingText(c), label: c.flow, group: c.id }));
    const plain = new NaiveBayesClassifier(once, ROUTER_CLASSIFIER);
    // A copy of every text, not a conversation's: learned by every fold, so each held-out text's copy was learned.
    const copies = once.map(({ group: _, ...text }) => ({ ...text, id: `${text.id}-copy`, calibrate: false }));
    const withCopies = new NaiveBayesClassifier([...once, ...copies], ROUTER_CLASSIFIER);
    expect(withCopies.size).toBe(2 * plain.size);
    expect(withCopies.temperature).toBeLessThan(plain.temperature);
    // Only texts marked calibrate: false besides the conversations': with none left to score, no calibration (temperature 1).
    const uncalibrated = new NaiveBayesClassifier(
      once.map((text) => ({ ...text, calibrate: false })),
      ROUTER_CLASSIFIER,
    );
    expect(uncalibrated.temperature).toBe(1);
    expect(plain.temperature).not.toBe(1);
  });

  it("trains on 1,000 conversations with the router's settings and knows all their flows", async () => {
    // How long it takes is a figure, not an assertion: `scripts/trainingTime.ts` and the replay report print it.
    const demo = await loadConversations(DEMO_DATA_FILE);
    const many = Array.from({ length: 1000 }, (_, i) => ({ ...demo[i % demo.length]!, id: `c-${i}` }));
    const classifier = new NaiveBayesClassifier(many.flatMap(routerTrainingTexts), ROUTER_CLASSIFIER);
    expect(classifier.size).toBe(many.flatMap(routerTrainingTexts).filter((text) => hasContent(text.text)).length);
    expect(classifier.labels).toEqual([...new Set(demo.map((c) => c.flow))].sort());
    expect(classifier.temperature).toBeGreaterThan(0);
  });
});

describe('LogisticRegressionClassifier', () => {
  it('learns held-out demo openings (TF-IDF + mljs logistic regression), with probabilities that sum to 1, and names too little data', async () => {
    const conversations = await loadConversations(DEMO_DATA_FILE);
    const { train, test } = crossValidationFolds(conversations)[0]!;
    const classifier = new LogisticRegressionClassifier(
      train.map((c) => ({ id: c.id, text: openingText(c), label: c.flow })),
      { calibrationFolds: 0 },
    );
    expect(classifier.kind).toBe('logistic-regression');
    const results = test.map((c) => ({ result: classifier.classify(openingText(c)), flow: c.flow }));
    for (const { result } of results)
      expect(result!.probabilities.reduce((sum, p) => sum + p.probability, 0)).toBeCloseTo(1, 6);
    // Chance is 1 in 10 flows.
    expect(results.filter(({ result, flow }) => result?.label === flow).length / results.length).toBeGreaterThan(0.6);
    expect(classifier.classify('hi there')).toBeUndefined();
    expect(
      () =>
        new LogisticRegressionClassifier([
          { id: 'a', text: 'password', label: 'x' },
          { id: 'b', text: 'package', label: 'y' },
        ]),
    ).toThrow(InvalidInputError);
  });
});

describe('LinearSvmClassifier', () => {
  // Two cases a word apart, each said four ways: a separable set.
  const SEPARABLE = [
    ...['refund my order', 'I want a refund', 'refund please, the item broke', 'when will my refund arrive'].map(
      (text, i) => ({ id: `r${i}`, text, label: 'refund' }),
    ),
    ...['change my shipping address', 'my address is wrong', 'update the delivery address', 'I moved, new address'].map(
      (text, i) => ({ id: `a${i}`, text, label: 'address' }),
    ),
    ...[
      'cancel my subscription',
      'stop the subscription',
      'end my subscription now',
      'I no longer want the subscription',
    ].map((text, i) => ({ id: `s${i}`, text, label: 'subscription' })),
  ];

  it('learns a separable set: every training text and new phrasings of each case get their label', () => {
    const classifier = new LinearSvmClassifier(SEPARABLE, { calibrationFolds: 0 });
    expect(classifier.kind).toBe('linear-svm');
    expect(classifier.labels).toEqual(['address', 'refund', 'subscription']);
    for (const example of SEPARABLE) expect(classifier.classify(example.text)?.label).toBe(example.label);
    expect(classifier.classify('where is the refund')?.label).toBe('refund');
    expect(classifier.classify('wrong address on the order')?.label).toBe('address');
    expect(classifier.classify('hello there')).toBeUndefined();
  });

  it('is deterministic: the same texts give the same model, temperature and probabilities', () => {
    const first = new LinearSvmClassifier(SEPARABLE, { lambda: 0.01, epochs: 7 });
    const second = createTextClassifier('linear-svm', SEPARABLE, { lambda: 0.01, epochs: 7 });
    expect(second.kind).toBe('linear-svm');
    expect(second.temperature).toBe(first.temperature);
    for (const text of ['my refund is late', 'new address please', 'cancel it'])
      expect(second.classify(text)).toEqual(first.classify(text));
  });

  it('is calibrated on held-out demo conversations: probabilities sum to 1, and the mean confidence is near the accuracy', async () => {
    const conversations = await loadConversations(DEMO_DATA_FILE);
    const scored: Array<{ confidence: number; right: boolean }> = [];
    for (const { train, test } of crossValidationFolds(conversations)) {
      const classifier = new LinearSvmClassifier(
        train.map((c) => ({ id: c.id, text: customerMessages(c).join('\n'), label: c.flow })),
      );
      expect(classifier.temperature).toBeGreaterThan(0);
      for (const c of test) {
        const result = classifier.classify(customerMessages(c).join('\n'));
        if (result === undefined) continue;
        expect(result.probabilities.reduce((sum, p) => sum + p.probability, 0)).toBeCloseTo(1, 6);
        expect(result.confidence).toBe(result.probabilities[0]!.probability);
        scored.push({ confidence: result.confidence, right: result.label === c.flow });
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    // Chance is 1 in 10 flows.
    expect(mean(scored.map((s) => (s.right ? 1 : 0)))).toBeGreaterThan(0.6);
    expect(Math.abs(mean(scored.map((s) => s.confidence)) - mean(scored.map((s) => (s.right ? 1 : 0))))).toBeLessThan(
      0.15,
    );
  });

  it('refuses two labels with too few words by the same named error as the other kinds, and answers its only label when it learned one', () => {
    const tooFew = [
      { id: 'a', text: 'password', label: 'x' },
      { id: 'b', text: 'package', label: 'y' },
    ];
    expect(() => new LinearSvmClassifier(tooFew)).toThrow(InvalidInputError);
    expect(() => new LinearSvmClassifier(tooFew)).toThrow(/at least 2 labels and 10 distinct words/);
    expect(() => createTextClassifier('linear-svm', tooFew)).toThrow(InvalidInputError);
    const single = new LinearSvmClassifier([{ id: 'a', text: 'password', label: 'account_access' }]);
    expect(single.classify('my parcel is late')).toMatchObject({ label: 'account_access', confidence: 1 });
  });
});
