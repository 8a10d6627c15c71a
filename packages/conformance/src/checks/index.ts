/**
 * The suite: every check, in the order they run. Checks that read what others may have written
 * (the secrets scan) come last.
 */
import type { Check } from "../check.js";
import { accountChecks } from "./accounts.js";
import { conversationChecks } from "./conversations.js";
import { errorChecks } from "./errors.js";
import { extensionChecks } from "./extensions.js";
import { searchChecks } from "./search.js";
import { uploadChecks } from "./uploads.js";
import { websocketChecks } from "./websocket.js";

const all: Check[] = [...conversationChecks, ...searchChecks, ...errorChecks, ...uploadChecks, ...extensionChecks, ...websocketChecks, ...accountChecks];

/** Every check of the suite, in run order (`secrets.all-responses` last: it scans every answer of the run). */
export const CHECKS: readonly Check[] = [...all.filter((c) => c.id !== "secrets.all-responses"), ...all.filter((c) => c.id === "secrets.all-responses")];

const duplicate = CHECKS.map((c) => c.id).find((id, i, ids) => ids.indexOf(id) !== i);
if (duplicate) throw new Error(`two checks have the id ${duplicate}`);
