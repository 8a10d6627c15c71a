/**
 * A conversation's events: its history paged with `iterateEvents` (50 a page, rendered as each page
 * arrives), then followed live with `subscribe`, resuming exactly after the last paged event.
 */
import { useEffect, useState } from "react";
import type { AcsClient, LiveStatus, UploadInput } from "@acs-toolkit/client";
import type { Event } from "@acs-toolkit/schema";

type Phase = "paging" | LiveStatus | "failed";

interface ConversationView {
  events: Event[];
  /** Events that came from paging (the rest came live). */
  paged: number;
  phase: Phase;
  error?: string;
}

export function useConversation(client: AcsClient<UploadInput>, conversationId: string): ConversationView {
  const [view, setView] = useState<ConversationView>({ events: [], paged: 0, phase: "paging" });

  useEffect(() => {
    const controller = new AbortController();
    const fail = (error: unknown) => {
      if (!controller.signal.aborted) setView((v) => ({ ...v, phase: "failed", error: error instanceof Error ? error.message : String(error) }));
    };
    (async () => {
      const history: Event[] = [];
      let page: Event[] = [];
      for await (const event of client.iterateEvents(conversationId, { limit: 50 }, { signal: controller.signal })) {
        page.push(event as Event);
        if (page.length === 50) {
          history.push(...page);
          page = [];
          setView({ events: [...history], paged: history.length, phase: "paging" });
        }
      }
      history.push(...page);
      setView({ events: [...history], paged: history.length, phase: "connecting" });
      const last = history.at(-1)?.id;
      const subscription = client.subscribe(conversationId, {
        from: last ? { afterId: last } : "start",
        signal: controller.signal,
        onEvent: (event) => setView((v) => ({ ...v, events: [...v.events, event as Event] })),
        onStatus: (status) => setView((v) => ({ ...v, phase: status })),
      });
      await subscription.done;
    })().catch(fail);
    return () => controller.abort();
  }, [client, conversationId]);

  return view;
}
