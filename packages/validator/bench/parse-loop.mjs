// The baseline of the acs-validate benchmark: read a JSONL file exactly as acs-validate does
// (256 KiB reads, decoded in windows of whole lines under 96 kB, split at newlines) and only
// JSON.parse each line. Plain JavaScript, run by node itself.
//   node bench/parse-loop.mjs <file.jsonl> <stats.json>
import { createReadStream, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

const WINDOW = 96 * 1024;
const [file, statsFile] = process.argv.slice(2);
const started = performance.now();
let events = 0;
let bytes = 0;
let carry = null;
const parse = (text) => {
  let from = 0;
  for (;;) {
    const newline = text.indexOf("\n", from);
    const line = newline < 0 ? text.slice(from) : text.slice(from, newline);
    if (line.length > 0) {
      JSON.parse(line);
      events++;
    }
    if (newline < 0) return;
    from = newline + 1;
  }
};
for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) {
  bytes += chunk.length;
  const buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
  const last = buffer.lastIndexOf(10);
  if (last < 0) {
    carry = buffer;
    continue;
  }
  let start = 0;
  while (start <= last) {
    let end = start + WINDOW >= last ? last : buffer.lastIndexOf(10, start + WINDOW);
    if (end < start) end = buffer.indexOf(10, start + WINDOW);
    parse(buffer.toString("utf8", start, end));
    start = end + 1;
  }
  carry = last + 1 < buffer.length ? buffer.subarray(last + 1) : null;
}
if (carry) parse(carry.toString("utf8"));
writeFileSync(statsFile, JSON.stringify({ maxRssBytes: process.resourceUsage().maxRSS * 1024, events, bytes, seconds: (performance.now() - started) / 1000 }));
