/** The EventStore contract (contract/index.ts) on the in-memory store. */
import { openMemoryStore } from "../../src/store/memory.js";
import { decodeRows } from "../../src/store/row-batch.js";
import { describeEventStoreContract } from "./contract/index.js";

describeEventStoreContract("memory", () => openMemoryStore({ decodeRows }));
