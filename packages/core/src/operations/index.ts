import { contextOperation } from "./context.js";
import { initOperation } from "./init.js";
import { markOperation } from "./mark.js";
import { playbookAddOperation } from "./playbook-add.js";
import { playbookExportOperation } from "./playbook-export.js";
import { playbookGetOperation } from "./playbook-get.js";
import { playbookImportOperation } from "./playbook-import.js";
import { playbookListOperation } from "./playbook-list.js";
import { playbookRemoveOperation } from "./playbook-remove.js";

/** Every operation, for front ends that register them mechanically (the MCP server). */
export const operations = [
  initOperation,
  contextOperation,
  markOperation,
  playbookListOperation,
  playbookGetOperation,
  playbookAddOperation,
  playbookRemoveOperation,
  playbookExportOperation,
  playbookImportOperation,
] as const;
