/**
 * The workspace's project skills reach the model as OpenHands 1.43.1 gives them: AGENTS.md and the
 * other always-on files in the SystemPromptEvent's dynamic context (read at the first message, so an
 * upload after the conversation was created counts), keyword skills in the user message that names
 * them (once per conversation), and nothing from outside the workspace. Expected texts were rendered
 * by OpenHands' own code (`fixtures/openhands-1.43.1/`).
 */
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { MessageEvent } from "@acs-toolkit/schema";
import { AgentRuntime, openAiLlmFactory } from "../src/index.js";
import { userText } from "../src/test-kit/index.js";
import { expectValidTrajectory, type Harness, useHarness } from "./support.js";

const FIXTURES = new URL("./fixtures/openhands-1.43.1/", import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES), "utf8");
/** A small project: AGENTS.md, CLAUDE.md, GEMINI.md, a repository skill and two keyword skills. */
const WORKSPACE_FIXTURE = fileURLToPath(new URL("workspace/", FIXTURES));

const start = useHarness();
let h: Harness;

/** The system message the scripted LLM received in its request `index`. */
function systemMessageSent(index = 0): string {
  const messages = h.llm.requests[index]!.body.messages as Array<{ role: string; content: string }>;
  expect(messages[0]!.role).toBe("system");
  return messages[0]!.content;
}

/** The user messages the scripted LLM received in its request `index`, as text. */
function userMessagesSent(index: number): string[] {
  const messages = h.llm.requests[index]!.body.messages as Array<{ role: string; content: unknown }>;
  return messages.filter((message) => message.role === "user").map((message) => (typeof message.content === "string" ? message.content : JSON.stringify(message.content)));
}

describe("AGENTS.md and project skills", () => {
  it("reads an AGENTS.md uploaded after the conversation opened, before its first message, into the system prompt", async () => {
    h = await start();
    expect(h.host.ofKind("SystemPromptEvent")).toEqual([]);
    writeFileSync(path.join(h.host.workspaceDir, "AGENTS.md"), "Always answer in French.\n");
    h.llm.play({ text: "D'accord." });
    await h.conversation.sendMessage(userText("Hello"), { run: true });
    await h.conversation.idle();

    const [prompt] = h.host.ofKind("SystemPromptEvent");
    expect(h.host.events[0]).toBe(prompt);
    expect(prompt!.dynamic_context?.text).toContain("<REPO_CONTEXT>");
    expect(prompt!.dynamic_context?.text).toContain("\n[BEGIN context from [agents]]\nAlways answer in French.\n\n[END Context]\n");
    expect(systemMessageSent()).toContain("[BEGIN context from [agents]]\nAlways answer in French.\n");
    expectValidTrajectory(h.host);
  });

  it("records the dynamic context OpenHands renders for the project's files, secrets and date", async () => {
    h = await start({
      settings: {
        secrets_store: { custom_secrets: { API_KEY: { secret: "example-api-key-value", description: "Key of the example API" } }, provider_tokens: { github: { token: "ghp_example_token_value" } } },
      },
      runtime: { clock: { now: () => new Date(2026, 2, 1, 23, 47, 12) } },
    });
    cpSync(WORKSPACE_FIXTURE, h.host.workspaceDir, { recursive: true });
    h.llm.play({ text: "ok" });
    await h.conversation.sendMessage(userText("Hi"), { run: true });
    await h.conversation.idle();

    const [prompt] = h.host.ofKind("SystemPromptEvent");
    const expected = fixture("dynamic-context.gpt-4o.txt").replaceAll("{{WORKSPACE}}", h.host.workspaceDir);
    expect(prompt!.dynamic_context).toEqual({ cache_prompt: false, type: "text", text: expected });
    expect(systemMessageSent()).toBe(`${prompt!.system_prompt.text}\n\n${expected}`);
    expect(JSON.stringify(h.host.events)).not.toContain("example-api-key-value");
  });

  it("gives CLAUDE.md to Claude models only", async () => {
    h = await start({ settings: { llm_model: "anthropic/claude-sonnet-4-5-20250929" }, runtime: { clock: { now: () => new Date(2026, 2, 1, 23, 47) } } });
    cpSync(WORKSPACE_FIXTURE, h.host.workspaceDir, { recursive: true });
    await h.conversation.prepare();
    const [prompt] = h.host.ofKind("SystemPromptEvent");
    expect(prompt!.dynamic_context?.text).toContain("[BEGIN context from [claude]]\nClaude: prefer small commits.\n");
    expect(prompt!.dynamic_context?.text).not.toContain("[gemini]");
  });

  it("never reads a file outside the workspace: an AGENTS.md linked to /etc/passwd is skipped", async () => {
    h = await start();
    symlinkSync("/etc/passwd", path.join(h.host.workspaceDir, "AGENTS.md"));
    mkdirSync(path.join(h.host.workspaceDir, ".openhands"));
    symlinkSync("/etc", path.join(h.host.workspaceDir, ".openhands", "skills"));
    h.llm.play({ text: "ok" });
    await h.conversation.sendMessage(userText("Hello"), { run: true });
    await h.conversation.idle();

    const [prompt] = h.host.ofKind("SystemPromptEvent");
    expect(prompt!.dynamic_context?.text).not.toContain("REPO_CONTEXT");
    expect(JSON.stringify(h.llm.requests)).not.toContain("root:x:0:0");
    expect(JSON.stringify(h.host.events)).not.toContain("root:x:0:0");
  });
});

describe("keyword skills", () => {
  it("adds a triggered skill to the user message as OpenHands does, once per conversation", async () => {
    h = await start();
    cpSync(WORKSPACE_FIXTURE, h.host.workspaceDir, { recursive: true });
    h.llm.play({ text: "Deploying." }, { text: "Again." });
    await h.conversation.sendMessage(userText("Please deploy the legacy service"), { run: true });
    await h.conversation.idle();

    const [first] = h.host.ofKind("MessageEvent").filter((event) => event.source === "user") as MessageEvent[];
    const knowledge = fixture("skill-knowledge.deploy-legacy.txt").replaceAll("{{WORKSPACE}}", h.host.workspaceDir);
    expect(first!.activated_skills).toEqual(["deploy", "legacy-api"]);
    expect(first!.extended_content).toEqual([{ cache_prompt: false, type: "text", text: knowledge }]);
    expect(userMessagesSent(0).at(-1)).toContain(knowledge);

    // A keyword of a skill already activated adds nothing; whole words only ("redeployment" is not "deploy").
    await h.conversation.sendMessage(userText("deploy it again, and no redeployment"), { run: true });
    await h.conversation.idle();
    const second = (h.host.ofKind("MessageEvent").filter((event) => event.source === "user") as MessageEvent[])[1]!;
    expect(second.activated_skills).toEqual([]);
    expect(second.extended_content).toEqual([]);
    expectValidTrajectory(h.host);
  });

  it("remembers the skills activated before a restart", async () => {
    h = await start();
    cpSync(WORKSPACE_FIXTURE, h.host.workspaceDir, { recursive: true });
    h.llm.play({ text: "Deploying." }, { text: "Legacy." });
    await h.conversation.sendMessage(userText("deploy"), { run: true });
    await h.conversation.idle();
    await h.runtime.close();

    const runtime = new AgentRuntime({ llm: openAiLlmFactory({ initialBackoffMs: 5, maxBackoffMs: 20 }) });
    try {
      const reopened = await runtime.open(h.host);
      await reopened.sendMessage(userText("deploy the legacy code"), { run: true });
      await reopened.idle();
    } finally {
      await runtime.close();
    }
    const users = h.host.ofKind("MessageEvent").filter((event) => event.source === "user") as MessageEvent[];
    expect(users.map((event) => event.activated_skills)).toEqual([["deploy"], ["legacy-api"]]);
    expect(h.host.ofKind("SystemPromptEvent")).toHaveLength(1);
  });
});
