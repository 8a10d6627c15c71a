/** Uploads into a conversation's workspace and their download. */
import type { UploadResponse } from "@acs-toolkit/schema";
import { HttpError } from "../core/errors.js";
import { requireConversation } from "../store/types.js";
import { RequestValidationError } from "../core/errors.js";
import type { ApiDeps } from "./deps.js";
import { jsonReply } from "./reply.js";
import type { Operation, OperationId } from "./types.js";

export function fileOperations({ store, validators, files }: ApiDeps): Record<"uploadFiles" | "downloadFile", Operation> {
  const conversationOf = async (operationId: OperationId, params: Record<string, string>) => {
    const { path } = validators.parameters(operationId, params, {});
    return { record: await requireConversation(store, String(path.conversation_id)), values: path };
  };
  const workspace = () => {
    if (!files) throw new HttpError(501, "Not Implemented: this host keeps no files");
    return files;
  };

  return {
    async uploadFiles({ params, headers, body }) {
      const { record } = await conversationOf("uploadFiles", params);
      const outcome = await workspace().receive(record.id, body, headers);
      if (!outcome.sawField) throw new RequestValidationError([{ loc: ["body", "files"], msg: "is required: send the files as parts of the form field `files`", type: "missing" }]);
      const response: UploadResponse = {
        file_urls: outcome.stored.map((file) => `/api/conversations/${record.id}/files/${encodeURIComponent(file.name)}`),
        skipped_files: outcome.skipped.map((file) => file.name),
        skipped_reasons: outcome.skipped as UploadResponse["skipped_reasons"],
      };
      return jsonReply(response);
    },

    async downloadFile({ params }) {
      const { record, values } = await conversationOf("downloadFile", params);
      const name = String(values.file_name);
      const file = await workspace().open(record.id, name);
      if (!file) throw new HttpError(404, `File not found: ${name}`);
      return {
        status: 200,
        headers: {
          "Content-Type": "application/octet-stream",
          "Content-Disposition": `attachment; filename*=UTF-8''${encodeURIComponent(name)}`,
          "X-Content-Type-Options": "nosniff",
        },
        body: [],
        stream: { length: file.size, chunks: () => file.chunks(), cancel: () => file.cancel() },
      };
    },
  };
}
