/** A promise with its `resolve` exposed, for making concurrent tools wait on each other in tests. */
export interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

/**
 * Creates a {@link Deferred}.
 * @example
 * ```ts
 * const started = deferred<void>();
 * setTimeout(() => started.resolve(), 5);
 * await started.promise;
 * ```
 */
export function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Resolves with `value` when `promise` does, or rejects after `ms` milliseconds (so a broken test fails instead of hanging). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
