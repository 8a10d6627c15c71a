/**
 * The side routes OpenHands' web UI reads when it loads, in the agent server's shapes (each
 * operation's description in the spec names the router it follows). They ask about the machine an
 * agent server runs on: saved workspace folders, the home folder, Canvas extensions, shared LLM
 * credentials, skill files. This server answers what is true of it, an empty list where it keeps
 * nothing of the kind; a 404 would be shown by the UI as an error.
 */
import type { HomeResponse, InstalledCanvasExtensionsList, InstalledPluginsListResponse, SkillsResponse, WorkspacesListResponse } from "@acs-toolkit/schema";
import { readJson } from "./body.js";
import type { ApiDeps } from "./deps.js";
import { jsonReply } from "./reply.js";
import type { Operation } from "./types.js";

/** The workspace root of a host without a disk (the browser mock keeps its files in memory). */
const DEFAULT_WORKSPACE_ROOT = "/workspace";

type WorkspaceOperations = "listWorkspaces" | "getHomeDirectory" | "listProviderConnections" | "listInstalledCanvasExtensions" | "listInstalledPlugins" | "loadSkills" | "createWorkspaceSession";

export function workspaceOperations({ validators, workspaceRoot = DEFAULT_WORKSPACE_ROOT }: ApiDeps): Record<WorkspaceOperations, Operation> {
  return {
    // Nothing is saved here, and no folder is offered to start in: each conversation gets its own.
    listWorkspaces: async () => jsonReply({ workspaces: [], workspaceParents: [] } satisfies WorkspacesListResponse),

    // The folder of every conversation's workspace, where each agent has its HOME
    // (`<root>/<conversation_id>`); no other folder of the host is named, none offered to browse.
    async getHomeDirectory({ query }) {
      validators.parameters("getHomeDirectory", {}, query);
      return jsonReply({ home: workspaceRoot, favorites: [], locations: [] } satisfies HomeResponse);
    },

    listProviderConnections: async () => jsonReply([]),

    listInstalledPlugins: async () => jsonReply({ plugins: [] } satisfies InstalledPluginsListResponse),
    listInstalledCanvasExtensions: async () => jsonReply({ canvas_extensions: [] } satisfies InstalledCanvasExtensionsList),

    // The agent reads no skill files, from `project_dir` or anywhere: every source gives none. The
    // sources are the agent server's, in its order.
    async loadSkills({ body }) {
      validators.body("loadSkills", await readJson(body));
      return jsonReply({ skills: [], sources: { sandbox: 0, registered_marketplaces: 0, sdk_base: 0, org: 0, project: 0 } } satisfies SkillsResponse);
    },

    // The agent server sets a cookie for its static server of workspace files; there is none here,
    // and the key is read from its header only, so no cookie carries it.
    async createWorkspaceSession({ body }) {
      body.discard();
      return { status: 204, headers: {}, body: [] };
    },
  };
}
