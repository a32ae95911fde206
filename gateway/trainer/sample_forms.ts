/**
 * `GET /api/rollouts/:id/samples?form=flat|tree|calls`: the flat samples (default), or the tree
 * and calls exports (`trajectory/samples/sample_exports.ts`), in the id transport the client asked for.
 * Typed arrays become JSON arrays, or with `?ids=base64` base64 of their little-endian bytes
 * (`int32le` ids, `uint8` masks, `float64le` logprobs, `int32le` `trained_by`); token rows are
 * `{dtype, shape, data}` (base64) in both.
 *
 * @module
 */
import {
  callsExport,
  KeptSetsRef,
  type Rollout,
  type SampleOptions,
  TokenRowsRef,
  treeExport,
} from "../../trajectory/mod.ts";
import { GatewayError } from "../gateway_error.ts";
import {
  base64Float64,
  base64Ids,
  base64Mask,
  type IdEncoding,
  sampleBody,
} from "./id_transport.ts";

export const SAMPLE_FORMS = ["flat", "tree", "calls"] as const;
export type SampleForm = typeof SAMPLE_FORMS[number];

/** The form a request asks for; a 400 naming the forms for anything else. */
export function sampleForm(query: string | undefined): SampleForm {
  const form = query ?? "flat";
  if ((SAMPLE_FORMS as readonly string[]).includes(form)) return form as SampleForm;
  throw new GatewayError(400, `form must be one of ${SAMPLE_FORMS.join(", ")}, got ${form}`);
}

/** JSON text of `value` with its typed arrays in `encoding`. */
function exportJson(value: unknown, encoding: IdEncoding): string {
  return JSON.stringify(value, (_key, v) => {
    if (v instanceof TokenRowsRef) return v.toJSON();
    if (v instanceof KeptSetsRef) return v.setsOrNull();
    if (!ArrayBuffer.isView(v)) return v;
    if (encoding === "json") return Array.from(v as unknown as ArrayLike<number>);
    if (v instanceof Int32Array) return base64Ids(v);
    if (v instanceof Uint8Array) return base64Mask(v);
    if (v instanceof Float64Array) return base64Float64(v);
    return Array.from(v as unknown as ArrayLike<number>);
  });
}

/** The body of a samples request in `form`. */
export function samplesBody(
  r: Rollout,
  form: SampleForm,
  encoding: IdEncoding,
  options?: Partial<SampleOptions>,
): string {
  const samples = r.samples(options);
  if (form === "flat") {
    return JSON.stringify({ id: r.id, samples: samples.map((s) => sampleBody(s, encoding)) });
  }
  const built = form === "tree"
    ? treeExport(r.id, r.group, r.turns, samples, r.rows)
    : callsExport(r.id, r.group, r.turns, samples, r.rows);
  return exportJson(
    { id: r.id, ...built, ...(encoding === "base64" ? { ids_encoding: "base64" } : {}) },
    encoding,
  );
}
