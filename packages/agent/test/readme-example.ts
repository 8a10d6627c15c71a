import { AgentRuntime } from "@acs-toolkit/agent";
import { MemoryHost, ScriptedLlmServer, userText } from "@acs-toolkit/agent/test-kit";

// An OpenAI-compatible endpoint: here the test kit's scripted LLM, playing two replies.
const llm = await ScriptedLlmServer.start();
llm.play(
  { toolCalls: [{ name: "terminal", arguments: { command: "echo 'hi from the sandbox' > note.txt" } }] },
  { toolCalls: [{ name: "finish", arguments: { message: "Wrote note.txt." } }] },
);

// The host: a server implements ConversationHost over its store; MemoryHost keeps events in memory.
const host = new MemoryHost({
  settings: { llm_model: "openai/gpt-4o", llm_api_key: "sk-test", llm_base_url: llm.url },
});

// One runtime per server. Commands run in bubblewrap; without it the terminal is refused.
const runtime = new AgentRuntime();
const conversation = await runtime.open(host); // tools up; the SystemPromptEvent comes with the first message
await conversation.sendMessage(userText("Write a note"), { run: true });
await conversation.idle();

console.log(conversation.executionStatus); // finished
console.log(host.events.map((event) => event.kind).join(" "));
// SystemPromptEvent MessageEvent ConversationStateUpdateEvent ConversationStateUpdateEvent ActionEvent
// ObservationEvent ConversationStateUpdateEvent ActionEvent ObservationEvent ConversationStateUpdateEvent

await runtime.close();
await llm.close();
export { host };
