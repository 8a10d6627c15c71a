/** Where the app's service is and which conversation it shows: `?api=…&key=…&conversation=…`. */
export interface Settings {
  /** The service's base URL (acs-mock's by default, `VITE_ACS_URL` at build time). */
  api: string;
  /** X-Session-API-Key (acs-mock's default key). */
  key: string;
  /** The conversation to show; without one the app lists acs-mock's scenarios. */
  conversation: string | undefined;
}

export function readSettings(search: string): Settings {
  const query = new URLSearchParams(search);
  return {
    api: query.get("api") ?? import.meta.env.VITE_ACS_URL ?? "http://127.0.0.1:4010",
    key: query.get("key") ?? "mock-session-key",
    conversation: query.get("conversation") ?? undefined,
  };
}
