import { useEffect, useMemo, useState } from "react";
import { createClient } from "@acs-toolkit/client";
import { describeEvent } from "./describe.js";
import type { Settings } from "./settings.js";
import { useConversation } from "./useConversation.js";

interface Scenario {
  name: string;
  description: string;
  conversation_id: string;
}

export function App({ settings }: { settings: Settings }) {
  const client = useMemo(() => createClient({ baseUrl: settings.api, apiKey: settings.key }), [settings.api, settings.key]);
  const [conversation, setConversation] = useState(settings.conversation);
  return (
    <main style={{ fontFamily: "system-ui, sans-serif", maxWidth: 900, margin: "0 auto" }}>
      <h1>Conversation viewer</h1>
      {conversation ? <Conversation key={conversation} client={client} id={conversation} /> : <Scenarios api={settings.api} onPick={setConversation} />}
    </main>
  );
}

/** acs-mock's scenarios (GET /__mock), for picking one; another service has none. */
function Scenarios({ api, onPick }: { api: string; onPick: (id: string) => void }) {
  const [scenarios, setScenarios] = useState<Scenario[] | string>([]);
  useEffect(() => {
    fetch(`${api}/__mock`)
      .then((response) => response.json() as Promise<{ scenarios: Scenario[] }>)
      .then(({ scenarios }) => setScenarios(scenarios), (error: unknown) => setScenarios(`No scenario list at ${api}/__mock (${String(error)}): pass ?conversation=<id>`));
  }, [api]);
  if (typeof scenarios === "string") return <p role="alert">{scenarios}</p>;
  return (
    <ul>
      {scenarios.map((s) => (
        <li key={s.conversation_id}>
          <button onClick={() => onPick(s.conversation_id)}>{s.name}</button> {s.description}
        </li>
      ))}
    </ul>
  );
}

function Conversation({ client, id }: { client: ReturnType<typeof createClient>; id: string }) {
  const { events, paged, phase, error } = useConversation(client, id);
  return (
    <section>
      <p>
        <span data-testid="phase">{phase}</span> · <span data-testid="count">{events.length}</span> events ({paged} paged, {events.length - paged} live)
      </p>
      {error && <p role="alert">{error}</p>}
      <ol data-testid="events">
        {events.map((event) => (
          <li key={event.id} data-id={event.id} data-kind={event.kind}>
            <code>{event.kind}</code> {describeEvent(event)}
          </li>
        ))}
      </ol>
    </section>
  );
}
