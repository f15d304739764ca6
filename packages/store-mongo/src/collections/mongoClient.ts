/**
 * The driver client a `MongoStore` works through: made from `{ url }` (the store owns it) or taken
 * from `{ client }` (the caller owns it), and the `order` ObjectIds made with that client's driver.
 */
import { ConfigurationError } from '@baton/core';
import { MongoClient, ObjectId } from 'mongodb';
import type { MongoStoreConnection } from '../mongoStoreOptions.js';

/** The client and whether the store must close it. */
export interface StoreClient {
  client: MongoClient;
  ownsClient: boolean;
}

/**
 * The client of `connection`: the one given, or a new one on the url (`serverSelectionTimeoutMS`
 * defaulting to the store's).
 * @throws {ConfigurationError} for a url the driver refuses (named without its password) or neither url nor client
 */
export function storeClient(connection: MongoStoreConnection, serverSelectionTimeoutMS: number): StoreClient {
  if (
    connection !== null &&
    typeof connection === 'object' &&
    'client' in connection &&
    typeof connection.client?.db === 'function'
  )
    return { client: connection.client, ownsClient: false };
  if (
    connection !== null &&
    typeof connection === 'object' &&
    'url' in connection &&
    typeof connection.url === 'string' &&
    connection.url !== ''
  ) {
    const clientOptions = { serverSelectionTimeoutMS, ...connection.clientOptions };
    try {
      return { client: new MongoClient(connection.url, clientOptions), ownsClient: true };
    } catch (cause) {
      throw new ConfigurationError(
        `MongoStore cannot use the url ${JSON.stringify(redact(connection.url))}: ${(cause as Error).message}`,
        { cause },
      );
    }
  }
  throw new ConfigurationError(
    'MongoStore needs { url: "mongodb://host:27017/" } or { client: MongoClient }; neither was given (is MONGODB_URL set?).',
  );
}

function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

/**
 * Makes the `order` ObjectIds with the client's own driver (its `pkFactory`, by default the
 * driver's `new ObjectId()`): an app's client of another copy or major version of `mongodb` refuses
 * BSON values made by this package's copy (`BSONVersionError`). Falls back to this copy's ObjectId
 * when the client has a custom `pkFactory` that makes something else.
 */
export function orderFactory(client: MongoClient): () => ObjectId {
  const factory = (client.options as { pkFactory?: { createPk?: () => unknown } } | undefined)?.pkFactory;
  const probe = typeof factory?.createPk === 'function' ? factory.createPk() : undefined;
  if (probe === null || typeof probe !== 'object' || (probe as { _bsontype?: unknown })._bsontype !== 'ObjectId')
    return () => new ObjectId();
  return () => factory!.createPk!() as ObjectId;
}
