import { MongoClient } from 'mongodb';
import { type DamageCheckpoint, damagedText } from '../../../test/conformance/checkpointDamage.js';
import { collectionNames } from '../src/collections/mongoCollections.js';

/** Damages a checkpoint's stored document (its `body`) directly with the driver, as a bad restore or a hand edit would. */
export function damageMongoCheckpoint(url: string, dbName: string): DamageCheckpoint {
  return async (sessionId, branchId, checkpointId, damage) => {
    const client = new MongoClient(url);
    try {
      const checkpoints = client
        .db(dbName)
        .collection<{ _id: string; body: string }>(collectionNames('baton_').checkpoints);
      const _id = `${sessionId}/${branchId}/${checkpointId}`;
      const doc = await checkpoints.findOne({ _id });
      if (doc === null) throw new Error(`No document of checkpoint ${_id}.`);
      await checkpoints.updateOne({ _id }, { $set: { body: damagedText(doc.body, damage) } });
    } finally {
      await client.close();
    }
  };
}
