import { describe, expect, it } from "vitest";
import { LlmError, resolveModel } from "../src/index.js";

describe("llm_model (LiteLLM provider/model)", () => {
  it.each([
    ["openai/gpt-4o", null, { provider: "openai", model: "gpt-4o", baseUrl: "https://api.openai.com/v1" }],
    ["gpt-4o-mini", null, { provider: "openai", model: "gpt-4o-mini", baseUrl: "https://api.openai.com/v1" }],
    ["anthropic/claude-sonnet-4-5-20250929", null, { provider: "anthropic", model: "claude-sonnet-4-5-20250929", baseUrl: "https://api.anthropic.com/v1/" }],
    ["openai/qwen2.5-coder", "http://127.0.0.1:8000/v1", { provider: "openai", model: "qwen2.5-coder", baseUrl: "http://127.0.0.1:8000/v1" }],
    ["openrouter/anthropic/claude-3.5-sonnet", null, { provider: "openrouter", model: "anthropic/claude-3.5-sonnet", baseUrl: "https://openrouter.ai/api/v1" }],
    ["litellm_proxy/my-model", "https://proxy.example/v1", { provider: "litellm_proxy", model: "my-model", baseUrl: "https://proxy.example/v1" }],
  ])("%s with base URL %s", (model, baseUrl, expected) => {
    expect(resolveModel(model, baseUrl)).toEqual(expected);
  });

  it.each([
    [null, "No LLM configured"],
    ["  ", "No LLM configured"],
    ["openai/", "names no model"],
    ["acme/x", 'Unknown LLM provider "acme"'],
  ])("refuses %j", (model, message) => {
    expect(() => resolveModel(model)).toThrow(LlmError);
    expect(() => resolveModel(model)).toThrow(message);
  });
});
