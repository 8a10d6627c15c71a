/**
 * The reference page of the live channel: a static HTML rendering of the bundled AsyncAPI 3.0
 * document (servers, channel with its parameters and WebSocket bindings, operations, messages and
 * every payload schema), made once at start-up. No script, no request to another host: schemas
 * fold with <details>, `$ref`s are links to their section.
 */

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The few Markdown forms the spec's descriptions use: paragraphs, `code`, **bold**. */
function markdownToHtml(text: string): string {
  return text
    .trim()
    .split(/\n\s*\n/)
    .map((paragraph) => {
      const html = escapeHtml(paragraph.replace(/\s*\n\s*/g, " "))
        .replace(/`([^`]+)`/g, "<code>$1</code>")
        .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
      return `<p>${html}</p>`;
    })
    .join("\n");
}

/** Follows a local `$ref` (`#/components/...`); AsyncAPI's multi-format wrapper `{ schemaFormat, schema }` is opened. */
function resolve(document: Json, node: unknown): unknown {
  let current = node;
  for (let hops = 0; isObject(current) && typeof current.$ref === "string" && hops < 32; hops++) {
    const ref = current.$ref;
    if (!ref.startsWith("#/")) break;
    current = ref
      .slice(2)
      .split("/")
      .map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"))
      .reduce<unknown>((at, token) => (isObject(at) ? at[token] : undefined), document);
  }
  return isObject(current) && "schemaFormat" in current && isObject(current.schema) ? current.schema : current;
}

/** `#/components/schemas/X` or `#/components/schemas/X/schema` → X. */
const schemaName = (ref: string) => /^#\/components\/schemas\/([^/]+)/.exec(ref)?.[1];
const anchor = (kind: string, name: string) => `${kind}-${name.replace(/[^\w-]/g, "_")}`;
const schemaLink = (name: string) => `<a href="#${anchor("schema", name)}"><code>${escapeHtml(name)}</code></a>`;

/** A one-line type: `string`, `integer ≥ 1`, a link to a named schema, `A | B`, `array of X`. */
function typeOf(schema: unknown): string {
  if (!isObject(schema)) return "any";
  if (typeof schema.$ref === "string") {
    const name = schemaName(schema.$ref);
    return name ? schemaLink(name) : `<code>${escapeHtml(schema.$ref)}</code>`;
  }
  if ("const" in schema) return `<code>${escapeHtml(JSON.stringify(schema.const))}</code>`;
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => `<code>${escapeHtml(JSON.stringify(value))}</code>`).join(" | ");
  for (const key of ["oneOf", "anyOf"] as const) {
    if (Array.isArray(schema[key])) return (schema[key] as unknown[]).map(typeOf).join(" | ");
  }
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === "string" ? [schema.type] : [];
  return (
    types
      .map((type) => {
        if (type === "array") return `array of ${typeOf(schema.items)}`;
        const format = typeof schema.format === "string" ? ` (${escapeHtml(schema.format)})` : "";
        return `${escapeHtml(type)}${format}`;
      })
      .join(" | ") || "any"
  );
}

function constraints(schema: Json): string {
  const parts: string[] = [];
  for (const [key, label] of [
    ["minimum", "≥"],
    ["maximum", "≤"],
    ["minLength", "length ≥"],
    ["maxLength", "length ≤"],
    ["minItems", "items ≥"],
    ["maxItems", "items ≤"],
  ] as const) {
    if (typeof schema[key] === "number") parts.push(`${label} ${schema[key]}`);
  }
  if (typeof schema.pattern === "string") parts.push(`pattern <code>${escapeHtml(schema.pattern)}</code>`);
  if ("default" in schema) parts.push(`default <code>${escapeHtml(JSON.stringify(schema.default))}</code>`);
  if (schema.deprecated === true) parts.push("deprecated");
  return parts.join(", ");
}

function propertiesTable(properties: Json, required: readonly unknown[]): string {
  const rows = Object.entries(properties).map(([name, raw]) => {
    const schema = isObject(raw) ? raw : {};
    const notes = [typeof schema.description === "string" ? markdownToHtml(schema.description).replace(/<\/?p>/g, "") : "", constraints(schema)].filter(Boolean).join(" — ");
    return `<tr><td><code>${escapeHtml(name)}</code>${required.includes(name) ? ' <span class="required">required</span>' : ""}</td><td>${typeOf(schema)}</td><td>${notes}</td></tr>`;
  });
  return `<table><thead><tr><th>property</th><th>type</th><th></th></tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

/** A schema's body: description, type, properties or variants, and its first example. */
function schemaBody(schema: unknown): string {
  if (!isObject(schema)) return "";
  const parts: string[] = [];
  if (typeof schema.description === "string") parts.push(markdownToHtml(schema.description));
  if (isObject(schema.properties)) parts.push(propertiesTable(schema.properties, Array.isArray(schema.required) ? schema.required : []));
  else parts.push(`<p>type: ${typeOf(schema)}${constraints(schema) ? ` (${constraints(schema)})` : ""}</p>`);
  const discriminator = isObject(schema.discriminator) && typeof schema.discriminator.propertyName === "string" ? schema.discriminator.propertyName : undefined;
  if (discriminator && isObject(schema.properties) === false) parts.push(`<p>Told apart by <code>${escapeHtml(discriminator)}</code>.</p>`);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) {
    parts.push(`<details class="example"><summary>example</summary><pre>${escapeHtml(JSON.stringify(schema.examples[0], null, 2))}</pre></details>`);
  }
  return parts.join("\n");
}

function messageSection(document: Json, name: string, message: Json): string {
  const payload = isObject(message.payload) ? message.payload : {};
  const ref = typeof payload.$ref === "string" ? schemaName(payload.$ref) : undefined;
  const title = typeof message.title === "string" ? message.title : "";
  return `<section id="${anchor("message", name)}" class="message">
<h3>${escapeHtml(typeof message.name === "string" ? message.name : name)}${title ? ` <small>${escapeHtml(title)}</small>` : ""}</h3>
${typeof message.description === "string" ? markdownToHtml(message.description) : ""}
<p>payload: ${ref ? schemaLink(ref) : typeOf(resolve(document, payload))}</p>
${ref ? "" : schemaBody(resolve(document, payload))}
</section>`;
}

function bindingTables(bindings: unknown): string {
  const ws = isObject(bindings) && isObject(bindings.ws) ? bindings.ws : undefined;
  if (!ws) return "";
  const parts: string[] = [];
  if (typeof ws.method === "string") parts.push(`<p>WebSocket upgrade request: <code>${escapeHtml(ws.method)}</code></p>`);
  for (const [key, label] of [
    ["query", "Query parameters"],
    ["headers", "Headers"],
  ] as const) {
    const schema = ws[key];
    if (isObject(schema) && isObject(schema.properties)) parts.push(`<h4>${label}</h4>${propertiesTable(schema.properties, Array.isArray(schema.required) ? schema.required : [])}`);
  }
  return parts.join("\n");
}

/** `{{HOST}}` in the page stands for the host the page was asked from (see {@link asyncApiPage}). */
export const HOST_PLACEHOLDER = "{{HOST}}";

/**
 * Renders the AsyncAPI document as one HTML page: `stylesheet` is the URL of {@link ASYNCAPI_PAGE_CSS},
 * `header` HTML put first in the body (the links between the references).
 */
export function renderAsyncApiPage(document: Json, options: { stylesheet: string; header?: string }): string {
  const info = isObject(document.info) ? document.info : {};
  const title = typeof info.title === "string" ? info.title : "AsyncAPI";
  const channels = isObject(document.channels) ? document.channels : {};
  const operations = isObject(document.operations) ? document.operations : {};
  const components = isObject(document.components) ? document.components : {};
  const messages = isObject(components.messages) ? components.messages : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};

  const channelSections = Object.entries(channels).map(([name, raw]) => {
    const channel = isObject(raw) ? raw : {};
    const address = typeof channel.address === "string" ? channel.address : name;
    const parameters = isObject(channel.parameters) ? channel.parameters : {};
    const parameterRows = Object.entries(parameters)
      .map(([param, value]) => `<tr><td><code>${escapeHtml(param)}</code></td><td>${isObject(value) && typeof value.description === "string" ? escapeHtml(value.description) : ""}</td></tr>`)
      .join("");
    return `<section id="${anchor("channel", name)}" class="channel">
<h2>Channel <code>${escapeHtml(address)}</code></h2>
<p class="address">This server: <code>ws://${HOST_PLACEHOLDER}${escapeHtml(address)}</code></p>
${typeof channel.description === "string" ? markdownToHtml(channel.description) : ""}
${parameterRows ? `<h4>Address parameters</h4><table><thead><tr><th>parameter</th><th></th></tr></thead><tbody>${parameterRows}</tbody></table>` : ""}
${bindingTables(channel.bindings)}
</section>`;
  });

  const operationSections = Object.entries(operations).map(([name, raw]) => {
    const operation = isObject(raw) ? raw : {};
    // AsyncAPI's `action` is the application's (the server's) view: it `send`s to clients, `receive`s from them.
    const direction = operation.action === "send" ? "server → client" : "client → server";
    const listed = (Array.isArray(operation.messages) ? operation.messages : [])
      .map((ref) => {
        const message = resolve(document, ref);
        const messageName = isObject(message) && typeof message.name === "string" ? message.name : "message";
        const title = isObject(message) && typeof message.title === "string" ? ` — ${escapeHtml(message.title)}` : "";
        return `<li><a href="#${anchor("message", messageName)}">${escapeHtml(messageName)}</a>${title}</li>`;
      })
      .join("");
    return `<section id="${anchor("operation", name)}" class="operation">
<h3><span class="direction">${direction}</span> ${escapeHtml(typeof operation.title === "string" ? operation.title : name)} <small><code>${escapeHtml(name)}</code></small></h3>
<ul>${listed}</ul>
</section>`;
  });

  const messageSections = Object.entries(messages).map(([name, raw]) => {
    const message = resolve(document, raw);
    return messageSection(document, isObject(message) && typeof message.name === "string" ? message.name : name, isObject(message) ? message : {});
  });

  const schemaSections = Object.entries(schemas).map(([name, raw]) => {
    const schema = resolve(document, raw);
    const summary = isObject(schema) && typeof schema.description === "string" ? ` <small>${escapeHtml(schema.description.split(/(?<=\.)\s/)[0]!)}</small>` : "";
    return `<details id="${anchor("schema", name)}" class="schema"><summary><code>${escapeHtml(name)}</code>${summary}</summary>\n${schemaBody(schema)}\n</details>`;
  });

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="/docs/favicon.svg">
<link rel="stylesheet" href="${escapeHtml(options.stylesheet)}">
</head>
<body class="asyncapi">
${options.header ?? ""}
<main>
<header>
<h1>${escapeHtml(title)} <small>${escapeHtml(String(info.version ?? ""))} · AsyncAPI ${escapeHtml(String(document.asyncapi ?? ""))}</small></h1>
${typeof info.description === "string" ? markdownToHtml(info.description) : ""}
</header>
${channelSections.join("\n")}
<section id="operations"><h2>Operations</h2>
${operationSections.join("\n")}
</section>
<section id="messages"><h2>Messages</h2>
${messageSections.join("\n")}
</section>
<section id="schemas"><h2>Schemas</h2>
${schemaSections.join("\n")}
</section>
</main>
</body>
</html>
`;
}

/** The page's stylesheet (a file, so that the page needs no 'unsafe-inline' under a CSP). */
export const ASYNCAPI_PAGE_CSS = `body.asyncapi{margin:0;font:15px/1.5 system-ui,sans-serif;color:#1b1b1b;background:#fafafa}
.asyncapi main{max-width:1100px;margin:0 auto;padding:0 20px 60px}
.asyncapi h1 small,.asyncapi h3 small{font-weight:normal;color:#666;font-size:.7em}
.asyncapi code{font:13px/1.4 ui-monospace,monospace;background:#eef1f4;padding:1px 4px;border-radius:3px}
.asyncapi table{border-collapse:collapse;width:100%;margin:8px 0 16px;background:#fff}
.asyncapi th,.asyncapi td{text-align:left;vertical-align:top;border:1px solid #dde2e7;padding:6px 8px}
.asyncapi th{background:#f0f3f6}
.asyncapi section.channel,.asyncapi section.operation,.asyncapi section.message{background:#fff;border:1px solid #dde2e7;border-radius:6px;padding:4px 16px 12px;margin:16px 0}
.asyncapi .direction{display:inline-block;font-size:.75em;background:#49cc90;color:#fff;border-radius:3px;padding:2px 6px;vertical-align:middle}
.asyncapi .required{color:#c00;font-size:.8em}
.asyncapi details.schema{background:#fff;border:1px solid #dde2e7;border-radius:6px;padding:6px 12px;margin:6px 0}
.asyncapi details.schema>summary{cursor:pointer}
.asyncapi details.schema:target{outline:2px solid #49cc90}
.asyncapi pre{background:#1f2933;color:#e4e7eb;padding:10px;border-radius:4px;overflow:auto;font-size:12px}
`;
