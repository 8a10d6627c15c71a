/**
 * The contract every EventStore implementation passes (types.ts): one suite, run by each store's
 * test file with a factory of fresh, empty stores (`describeEventStoreContract`). It checks what a
 * caller can observe — paging in both orders with cursors, every filter, exact bytes, atomicity,
 * duplicate ids, staged imports, documents, errors, counts, the order of concurrent calls — against
 * a naive model, never a store's internals (each store's own tests check those).
 */
import { afterEach, describe } from "vitest";
import type { EventStore } from "../../../src/store/types.js";
import { listingContract } from "./listing.js";
import { propertyContract } from "./property.js";
import { searchContract } from "./search.js";
import { writesContract } from "./writes.js";

/** A fresh, empty store. `variant` (0 ≤ variant < `variants`) picks one of its configurations. */
type CreateStore = (variant: number) => EventStore | Promise<EventStore>;

interface ContractOptions {
  /**
   * How many configurations `createStore` knows (the SQLite store's body-search thresholds, say);
   * the data-heavy tests run on each. Default 1.
   */
  variants?: number;
  /** Whether a body-filtered page may end short on a scan budget (SearchPage.resumeAfter). Default false. */
  scanBudget?: boolean;
  /** Called with every store a test opened, before it is closed (a store's own after-checks). */
  afterEachStore?: (store: EventStore) => void | Promise<void>;
}

/** What each part of the contract gets: `open` makes a store that is closed after the test. */
export interface StoreContext {
  open(variant?: number): Promise<EventStore>;
  variants: number;
  scanBudget: boolean;
}

/** Runs the EventStore contract on stores from `createStore`. */
export function describeEventStoreContract(name: string, createStore: CreateStore, options: ContractOptions = {}): void {
  describe(`EventStore contract: ${name}`, () => {
    const opened: EventStore[] = [];
    afterEach(async () => {
      for (const store of opened.splice(0)) {
        await options.afterEachStore?.(store);
        await store.close();
      }
    });
    const context: StoreContext = {
      async open(variant = 0) {
        const store = await createStore(variant);
        opened.push(store);
        return store;
      },
      variants: Math.max(1, options.variants ?? 1),
      scanBudget: options.scanBudget ?? false,
    };
    writesContract(context);
    searchContract(context);
    propertyContract(context);
    listingContract(context);
  });
}
