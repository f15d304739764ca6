/**
 * Wraps a Store in a Proxy that passes a kill point before and after each of its calls, so a chaos
 * child can die just before a write reaches the store or just after it did.
 */
import type { Store } from '@baton/core';
import type { KillSwitch } from './killSwitch.js';

// Setup and teardown of the store object are not part of the conversation.
const UNCOUNTED = new Set(['close', 'init', 'constructor']);

/**
 * A Store that behaves like `store`, with kill points `store.<method>:before` and `:after` around every call
 * (but those of the methods `uncounted` names: a server replica's polling reads and lease renewals, whose
 * number depends on timing).
 *
 * @example
 * ```ts
 * const store = chaosStore(new FileStore({ directory }), kill);
 * ```
 */
export function chaosStore<TStore extends Store>(
  store: TStore,
  kill: KillSwitch,
  uncounted: (method: string) => boolean = () => false,
): TStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (
        typeof value !== 'function' ||
        typeof property !== 'string' ||
        UNCOUNTED.has(property) ||
        uncounted(property)
      ) {
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: unknown[]) => {
        await kill.point(`store.${property}:before`);
        const result = await value.apply(target, args);
        await kill.point(`store.${property}:after`);
        return result;
      };
    },
  });
}
