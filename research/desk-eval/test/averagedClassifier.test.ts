import { DEMO_DATA_FILE } from '@baton/example-support-desk/data/dataSource.js';
import {
  createRouterClassifier,
  loadConversations,
  NaiveBayesClassifier,
  openingText,
  ROUTER_CLASSIFIER,
  routerTrainingTexts,
} from '@baton/support-desk-models';
import { describe, expect, it } from 'vitest';
import { crossValidationFolds } from '../src/folds.js';

describe("createRouterClassifier (the router's averaged naive Bayes pair)", () => {
  it("gives the mean of its two classifiers' probabilities, which sum to 1, the best first, and nothing for a greeting", async () => {
    const conversations = await loadConversations(DEMO_DATA_FILE);
    const [fold] = crossValidationFolds(conversations);
    const texts = fold!.train.flatMap(routerTrainingTexts);
    const router = createRouterClassifier(texts);
    const alone = new NaiveBayesClassifier(texts, ROUTER_CLASSIFIER);
    const words = new NaiveBayesClassifier(texts, { calibrationFolds: 2 });
    expect(router.classify('hi')).toBeUndefined();
    expect(router.labels).toEqual(alone.labels);
    let right = 0;
    for (const conversation of fold!.test) {
      const text = openingText(conversation);
      const result = router.classify(text)!;
      const sum = result.probabilities.reduce((total, { probability }) => total + probability, 0);
      expect(sum).toBeCloseTo(1, 9);
      expect(result.probabilities[0]).toEqual({ label: result.label, probability: result.confidence });
      const a = alone.classify(text)!.probabilities.find((p) => p.label === result.label)?.probability ?? 0;
      const b = words.classify(text)?.probabilities.find((p) => p.label === result.label)?.probability ?? 0;
      expect(result.confidence).toBeCloseTo((a + b) / 2, 9);
      if (result.label === conversation.flow) right += 1;
    }
    // Held-out demo openings: most are routed to their flow.
    expect(right / fold!.test.length).toBeGreaterThan(0.7);
  });
});
