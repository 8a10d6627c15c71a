/**
 * The floor of the HTTP benchmark (http.bench.ts): a bare `node:http` server, in a process of its
 * own, answering every request with the first page of 100 events of one conversation, read from the
 * same SQLite file with the store's own page query (SqliteDatabase.searchJson: one statement, the
 * page's JSON as one blob). No routing, auth, validation, cursor or logging: what the reference
 * server adds to its page is what the two figures differ by.
 *
 *   tsx bench/floor-server.ts <sqlite file> <conversation id>     (prints "listening on <url>")
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { openSqliteReader } from "../src/store/sqlite/index.js";

const [file, conversationId] = process.argv.slice(2) as [string, string];
const database = openSqliteReader({ file });
const head = Buffer.from('{"items":[');
const tail = Buffer.from('],"next_page_id":null}');

const server = createServer((_request, response) => {
  const page = database.searchJson(conversationId, { order: "asc", limit: 100 });
  const body = Buffer.concat([head, page.json, tail]);
  response.writeHead(200, { "Content-Type": "application/json", "Content-Length": body.length });
  response.end(body);
});
server.listen(0, "127.0.0.1", () => console.log(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}`));
