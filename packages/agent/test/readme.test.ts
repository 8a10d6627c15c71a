import { readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { checkTrajectory } from "../src/test-kit/index.js";

const here = path.dirname(fileURLToPath(import.meta.url));

describe("README", () => {
  it("shows test/readme-example.ts as its example", () => {
    const readme = readFileSync(path.join(here, "../README.md"), "utf8");
    const block = /## Use\n\n```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBe(readFileSync(path.join(here, "readme-example.ts"), "utf8"));
  });

  it("the example runs a conversation to its end", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const { host } = await import("./readme-example.js");
    expect(log.mock.calls).toEqual([
      ["finished"],
      [
        "SystemPromptEvent MessageEvent ConversationStateUpdateEvent ConversationStateUpdateEvent ActionEvent ObservationEvent ConversationStateUpdateEvent ActionEvent ObservationEvent ConversationStateUpdateEvent",
      ],
    ]);
    log.mockRestore();
    expect(readFileSync(path.join(host.workspaceDir, "note.txt"), "utf8")).toBe("hi from the sandbox\n");
    expect(checkTrajectory(host.events)).toEqual({ errors: [], warnings: [] });
    rmSync(host.workspaceDir, { recursive: true, force: true });
  });
});
