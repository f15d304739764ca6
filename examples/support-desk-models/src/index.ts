// The support desk's offline models: what the desk calls (createOfflineModels) and what its evaluation
// (research/desk-eval) tunes: the classifiers, their features and the router and specialist policies.
export * from './abcdData.js';
export * from './abcdPolicyModel.js';
export * from './abcdRouterModel.js';
export * from './averagedClassifier.js';
export * from './conversationView.js';
export * from './decisionStream.js';
export * from './guidelines.js';
export * from './guidelineValues.js';
export * from './learners.js';
export * from './offlineModels.js';
export * from './ontology.js';
export * from './slotExtraction.js';
export * from './specialistPolicy.js';
export * from './textClassifier.js';
export * from './textFeatures.js';
