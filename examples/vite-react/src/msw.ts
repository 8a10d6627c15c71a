/**
 * The mock in the page (`?msw`): MSW's Service Worker answers the app's requests to `api`, HTTP and
 * the live channel, from the mock's world running in this tab (`@acs-toolkit/mock/msw-browser`), so
 * no acs-mock process is needed. Loaded only then, in chunks of its own.
 */
export async function startMockServiceWorker(api: string): Promise<void> {
  const [{ setupWorker }, { createBrowserMockHandlers }] = await Promise.all([import("msw/browser"), import("@acs-toolkit/mock/msw-browser")]);
  const mock = await createBrowserMockHandlers({ baseUrl: api, scenarios: ["happy"] });
  // The worker script is copied next to index.html at build time (vite.config.ts).
  await setupWorker(...mock.handlers).start({ serviceWorker: { url: "./mockServiceWorker.js" }, onUnhandledRequest: "bypass", quiet: true });
}
