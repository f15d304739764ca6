/** Starts the store bench:scale measures: FerretDB 1.24 on a PostgreSQL of its own or on SQLite, or MONGODB_URL. */
import { type MongoServer, startMongoServer } from '../../support/mongoServer.js';
import { type PostgresServer, postgresBinDir, startPostgres } from '../../support/postgresServer.js';

/** The server processes whose CPU the bench reports (absent: not started by this run). */
export interface ServerPids {
  ferretdb?: number;
  postgres?: number;
}

/** Starts the store the run measures: FerretDB on PostgreSQL or SQLite, unless MONGODB_URL names one. */
export async function startStore(
  backend: string | undefined,
  pgSettings: readonly string[],
): Promise<{ url: string; servers: ServerPids; close: () => Promise<void> }> {
  const given = process.env.MONGODB_URL ?? '';
  if (given !== '') {
    console.log('store: MONGODB_URL');
    return { url: given, servers: {}, close: async () => {} };
  }
  const chosen = backend ?? (postgresBinDir() === undefined ? 'sqlite' : 'pg');
  if (chosen !== 'pg' && chosen !== 'sqlite')
    throw new Error(`--backend must be pg or sqlite, not ${JSON.stringify(chosen)}.`);
  let postgres: PostgresServer | undefined;
  let mongo: MongoServer | undefined;
  try {
    const settings: Record<string, string> = { max_connections: '200' };
    for (const setting of pgSettings) {
      const [name, ...value] = setting.split('=');
      if (name === undefined || name === '' || value.length === 0)
        throw new Error(`--pg takes name=value (a PostgreSQL setting), not ${JSON.stringify(setting)}.`);
      settings[name] = value.join('=');
    }
    if (chosen === 'pg') postgres = await startPostgres({ settings });
    mongo = await startMongoServer(postgres === undefined ? {} : { postgresqlUrl: postgres.url });
  } catch (error) {
    await postgres?.close();
    throw error;
  }
  const changed = pgSettings.length === 0 ? '' : `, settings ${pgSettings.join(' ')}`;
  const on =
    postgres === undefined
      ? 'SQLite'
      : `${postgres.version} on 127.0.0.1:${postgres.port} (as ${postgres.osUser}${changed})`;
  console.log(
    `store: FerretDB 1.24 on ${on}, on ${mongo.url}, started for this run; --backend pg|sqlite chooses, MONGODB_URL overrides`,
  );
  const servers: ServerPids = {};
  if (mongo.pid !== undefined) servers.ferretdb = mongo.pid;
  if (postgres !== undefined) servers.postgres = postgres.pid;
  const started = mongo;
  return {
    url: mongo.url,
    servers,
    close: async () => {
      await started.close();
      await postgres?.close();
    },
  };
}
