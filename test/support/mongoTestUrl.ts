import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The MongoDB url of this test run (`MONGODB_URL` or the FerretDB started by globalSetup). */
    mongoUrl: string;
  }
}

/**
 * The MongoDB url the globalSetup provided (`MONGODB_URL` or the run's FerretDB).
 * @throws {Error} when the project has no mongo globalSetup configured
 */
export function mongoTestUrl(): string {
  const url = inject('mongoUrl');
  if (typeof url !== 'string' || url === '') {
    throw new Error(
      "No MongoDB url was provided: add test/support/mongoGlobalSetup.ts to this vitest project's globalSetup.",
    );
  }
  return url;
}
