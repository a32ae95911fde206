/**
 * Each real CLI (Claude Code, Codex, pi) with a gpt-oss policy writing harmony: see
 * `family_scenario.ts`. The tokenizer files are the real gpt-oss ones.
 *
 * @module
 */
import { claudeCode, codex, pi } from "../../harness/mod.ts";
import { GPT_OSS_DIR } from "../families/gpt_oss_files.ts";
import { familyScenarioTest } from "./family_scenario.ts";

const gptOss = {
  family: "gpt-oss",
  modelDir: GPT_OSS_DIR,
  templateKwargs: { conversation_start_date: "2026-11-24" },
};
for (const h of [claudeCode, codex, pi]) familyScenarioTest(h, gptOss);
