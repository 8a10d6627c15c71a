import { formatText, runConformance } from "@acs-toolkit/conformance";

const report = await runConformance({
  baseUrl: process.env.ACS_BASE_URL ?? "http://127.0.0.1:3000",
  apiKey: process.env.SESSION_API_KEY,
  only: ["search", "limit"],
});
process.stdout.write(formatText(report));
if (report.failed > 0) process.exitCode = 1;
export { report };
