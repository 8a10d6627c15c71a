import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { exampleEvents } from "@acs-toolkit/schema/examples";
import type { Event } from "@acs-toolkit/schema";

/** The recorded corpus, copied into the repository (a clone has no ../shared). */
const corpusDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../fixtures/openhands-recorded");

export const corpusFiles = readdirSync(corpusDir).filter((f) => f.endsWith(".json") || f.endsWith(".jsonl")).sort();

export const readCorpus = (file: string) => readFileSync(path.join(corpusDir, file), "utf8");

const examples = exampleEvents();

/** A fresh, valid example event of one kind (for ActionEvent / ObservationEvent: of one variant). */
export function example(kind: Event["kind"], variant?: string): Record<string, any> {
  const found = examples.find(
    (e) =>
      e.kind === kind &&
      (variant === undefined ||
        (e.kind === "ActionEvent" && e.action?.kind === variant) ||
        (e.kind === "ObservationEvent" && e.observation.kind === variant)),
  );
  if (!found) throw new Error(`no example of ${kind} ${variant ?? ""}`);
  return structuredClone(found) as Record<string, any>;
}

export const allExamples = () => structuredClone(examples);
