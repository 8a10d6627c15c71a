/** Uploads into a conversation (streamed to disk) and their download. */
import { createReadStream } from "node:fs";
import path from "node:path";
import { pipeline } from "node:stream";
import { Router, type RequestHandler } from "express";
import type { UploadResponse } from "@acs-toolkit/schema";
import { HttpError } from "../http/errors.js";
import type { Logger } from "../log.js";
import { RequestValidationError, type RequestValidators } from "../validation/request-validators.js";
import { requireConversation, type EventStore } from "../store/types.js";
import { openStoredFile, receiveUploads, UploadFolders, UploadRequestError, type UploadLimits } from "../uploads.js";

interface FileRoutesDeps {
  store: EventStore;
  validators: RequestValidators;
  auth: RequestHandler;
  dataDir: string;
  limits: UploadLimits;
  /** Who stored files belong to (the agent sandbox's user, for a server running as root). */
  owner?: { uid: number; gid: number };
  log: Logger;
}

export function fileRoutes({ store, validators, auth, dataDir, limits, owner, log }: FileRoutesDeps): Router {
  const router = Router();
  const folders = new UploadFolders();
  const conversationDir = (id: string) => path.join(dataDir, "uploads", id);
  const conversationOf = async (operationId: string, params: Record<string, string>) => {
    const { path: values } = validators.parameters(operationId, params, {});
    return { record: await requireConversation(store, String(values.conversation_id)), values };
  };

  router.post("/api/conversations/:conversation_id/upload-files", auth, async (req, res) => {
    const { record } = await conversationOf("uploadFiles", req.params as Record<string, string>);
    let outcome;
    try {
      outcome = await receiveUploads(req, { dir: conversationDir(record.id), limits, folders, owner });
    } catch (error) {
      if (error instanceof UploadRequestError) throw new RequestValidationError([{ loc: ["body"], msg: error.detail, type: "value_error" }]);
      throw error;
    }
    if (!outcome.sawField) throw new RequestValidationError([{ loc: ["body", "files"], msg: "is required: send the files as parts of the form field `files`", type: "missing" }]);
    const response: UploadResponse = {
      file_urls: outcome.stored.map((file) => `/api/conversations/${record.id}/files/${encodeURIComponent(file.name)}`),
      skipped_files: outcome.skipped.map((file) => file.name),
      skipped_reasons: outcome.skipped,
    };
    res.json(response);
  });

  router.get("/api/conversations/:conversation_id/files/:file_name", auth, async (req, res) => {
    const { record, values } = await conversationOf("downloadFile", req.params as Record<string, string>);
    const name = String(values.file_name);
    const file = await openStoredFile(conversationDir(record.id), name);
    if (!file) throw new HttpError(404, `File not found: ${name}`);
    res.writeHead(200, {
      "Content-Type": "application/octet-stream",
      "Content-Length": String(file.size),
      "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
      "X-Content-Type-Options": "nosniff",
    });
    // The open file is read, whatever happens to its name. A read error after the headers cannot
    // change the status: pipeline cuts the response off, which the client sees against
    // Content-Length (never a short body taken for the whole); the handle is closed either way.
    // Exactly the bytes announced: an agent's file may grow while it is read. (A range cannot say
    // "no byte": an empty file's stream is closed unread.)
    const stream = createReadStream("", { fd: file.handle, start: 0, end: Math.max(0, file.size - 1) });
    if (file.size === 0) {
      stream.destroy();
      res.end();
      return;
    }
    pipeline(stream, res, (error) => {
      if (error && (error as NodeJS.ErrnoException).code !== "ERR_STREAM_PREMATURE_CLOSE") {
        log.warn({ err: error.message, conversationId: record.id }, "download failed while reading");
      }
    });
  });

  return router;
}
