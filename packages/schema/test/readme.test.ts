import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import openapi from "../src/generated/openapi.json" with { type: "json" };

const read = (file: string) => readFileSync(new URL(file, import.meta.url), "utf8");
const readme = read("../README.md");
const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);

it("the README's usage example is test/readme-example.test-d.ts, byte for byte", () => {
  expect(blocks[0]).toBe(read("./readme-example.test-d.ts"));
});

it("the example imports the package by its public names", () => {
  expect(blocks[0]).toMatch(/from "@acs-toolkit\/schema";/);
  expect(blocks[0]).toMatch(/from "@acs-toolkit\/schema\/documents";/);
});

// openapi-fetch is not installed in this repository, so the snippets using it cannot be type-checked;
// they are the only other TypeScript blocks allowed, and the endpoints they call must exist.
it("every other ts block is an openapi-fetch snippet calling real endpoints", () => {
  const rest = blocks.slice(1);
  expect(rest.length).toBeGreaterThan(0);
  for (const block of rest) {
    expect(block).toMatch(/^import createClient from "openapi-fetch";$/m);
    const calls = [...block.matchAll(/client\.(GET|POST|PUT|PATCH|DELETE)\("([^"]+)"/g)];
    expect(calls.length).toBeGreaterThan(0);
    for (const [, method, path] of calls) {
      expect(openapi.paths, path).toHaveProperty([path!, method!.toLowerCase()]);
    }
  }
});
