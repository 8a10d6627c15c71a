/** Uploads into a conversation (streamed to disk) and their download. */
import { createReadStream } from "node:fs";
import path from "node:path";
import { Router, type RequestHandler } from "express";
import type { UploadResponse } from "@acs-toolkit/schema";
import { HttpError } from "../http/errors.js";
import { RequestValidationError, type RequestValidators } from "../http/validation.js";
import { requireConversation, type EventStore } from "../store/types.js";
import { openStoredFile, receiveUploads, UploadRequestError, type UploadLimits } from "../uploads.js";

export interface FileRoutesDeps {
  store: EventStore;
  validators: RequestValidators;
  auth: RequestHandler;
  dataDir: string;
  limits: UploadLimits;
}

export function fileRoutes({ store, validators, auth, dataDir, limits }: FileRoutesDeps): Router {
  const router = Router();
  const conversationDir = (id: string) => path.join(dataDir, "uploads", id);
  const conversationOf = (operationId: string, params: Record<string, string>) => {
    const { path: values } = validators.parameters(operationId, params, {});
    return { record: requireConversation(store, String(values.conversation_id)), values };
  };

  router.post("/api/conversations/:conversation_id/upload-files", auth, async (req, res) => {
    const { record } = conversationOf("uploadFiles", req.params as Record<string, string>);
    let outcome;
    try {
      outcome = await receiveUploads(req, { dir: conversationDir(record.id), limits });
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

  router.get("/api/conversations/:conversation_id/files/:file_name", auth, (req, res) => {
    const { record, values } = conversationOf("downloadFile", req.params as Record<string, string>);
    const name = String(values.file_name);
    const file = openStoredFile(conversationDir(record.id), name);
    if (!file) throw new HttpError(404, `File not found: ${name}`);
    res.writeHead(200, {
      "Content-Type": "application/octet-stream",
      "Content-Length": String(file.size),
      "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
      "X-Content-Type-Options": "nosniff",
    });
    createReadStream(file.path).pipe(res);
  });

  return router;
}
