/** A Node request's body as the operations read it (api/types.ts ApiBody). */
import type { Request, Response } from "express";
import type { ApiBody } from "../api/types.js";
import { jsonBodyBytes, jsonBodyChunks } from "./json-body.js";

export class NodeRequestBody implements ApiBody {
  readonly length: number | undefined;
  readonly compressed: boolean;

  constructor(
    /** The request, for what reads its stream itself (a multipart upload). */
    readonly request: Request,
    private readonly response: Response,
    private readonly limitBytes: number,
  ) {
    const length = Number(request.headers["content-length"] ?? NaN);
    this.length = Number.isNaN(length) ? undefined : length;
    this.compressed = (request.headers["content-encoding"] ?? "identity") !== "identity";
  }

  is(types: readonly string[]): boolean {
    return Boolean(this.request.is([...types]));
  }

  jsonBytes(): Promise<Uint8Array | undefined> {
    const { request, response } = this;
    return new Promise((resolve, reject) =>
      jsonBodyBytes(this.limitBytes)(request, response, (error?: unknown) => (error ? reject(error) : resolve(request.body as Buffer | undefined))),
    );
  }

  chunks(mediaTypes: readonly string[]): AsyncIterable<Uint8Array> {
    return jsonBodyChunks(this.request, this.limitBytes, mediaTypes);
  }

  discard(): void {
    if (!this.request.readableEnded) this.request.resume();
  }
}
