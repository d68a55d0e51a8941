import { contextOperation } from "./context.js";
import { forgetOperation } from "./forget.js";
import { historyOperation } from "./history.js";
import { recallOperation } from "./recall.js";
import { undoOperation } from "./undo.js";
import { initOperation } from "./init.js";
import { markOperation } from "./mark.js";
import { playbookAddOperation, rememberOperation } from "./playbook-add.js";
import { playbookExportOperation } from "./playbook-export.js";
import { playbookGetOperation } from "./playbook-get.js";
import { playbookImportOperation } from "./playbook-import.js";
import { playbookListOperation } from "./playbook-list.js";
import { playbookRemoveOperation } from "./playbook-remove.js";
import { similarOperation } from "./similar.js";
import { staleOperation } from "./stale.js";
import { statsOperation } from "./stats.js";
import { topOperation } from "./top.js";
import { whyOperation } from "./why.js";
import { projectOperation } from "./project.js";
import { quickstartOperation } from "./quickstart.js";
import { playbookBootstrapOperation, startersOperation } from "./starters.js";
import { doctorOperation } from "./doctor.js";
import { outcomeApplyOperation, outcomeOperation } from "./outcome.js";
import { usageOperation } from "./usage.js";
import { validateOperation } from "./validate.js";
import {
  privacyAllowOperation,
  privacyDenyOperation,
  privacyDisableOperation,
  privacyEnableOperation,
  privacyStatusOperation,
} from "./privacy.js";
import {
  onboardGapsOperation,
  onboardGuidedOperation,
  onboardMarkDoneOperation,
  onboardPromptOperation,
  onboardReadOperation,
  onboardReadTemplateOperation,
  onboardResetOperation,
  onboardSampleOperation,
  onboardStatusOperation,
} from "./onboard.js";

import { undoRunOperation } from "./undo-run.js";
import { playbookCategoryOperation, playbookPinOperation } from "./playbook-pin.js";
import { reflectOperation } from "./reflect.js";
import { diaryOperation } from "./diary.js";
import { auditOperation } from "./audit.js";
import { memorySearchOperation } from "./memory-search.js";
import { traumaAddOperation, traumaHealOperation, traumaImportOperation, traumaListOperation, traumaRemoveOperation, traumaScanOperation } from "./trauma.js";

/** Every operation, for front ends that register them mechanically (the MCP server). */
export const operations = [
  initOperation,
  contextOperation,
  markOperation,
  playbookListOperation,
  playbookGetOperation,
  playbookAddOperation,
  playbookRemoveOperation,
  playbookPinOperation,
  playbookCategoryOperation,
  playbookExportOperation,
  playbookImportOperation,
  rememberOperation,
  recallOperation,
  forgetOperation,
  undoOperation,
  undoRunOperation,
  reflectOperation,
  diaryOperation,
  auditOperation,
  historyOperation,
  statsOperation,
  topOperation,
  staleOperation,
  whyOperation,
  similarOperation,
  projectOperation,
  quickstartOperation,
  startersOperation,
  playbookBootstrapOperation,
  doctorOperation,
  privacyStatusOperation,
  privacyEnableOperation,
  privacyDisableOperation,
  privacyAllowOperation,
  privacyDenyOperation,
  onboardStatusOperation,
  onboardGapsOperation,
  onboardSampleOperation,
  onboardReadOperation,
  onboardReadTemplateOperation,
  onboardPromptOperation,
  onboardGuidedOperation,
  onboardMarkDoneOperation,
  onboardResetOperation,
  outcomeOperation,
  outcomeApplyOperation,
  usageOperation,
  validateOperation,
  memorySearchOperation,
  traumaListOperation,
  traumaAddOperation,
  traumaHealOperation,
  traumaRemoveOperation,
  traumaImportOperation,
  traumaScanOperation,
] as const;
