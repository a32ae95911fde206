import assert from "node:assert/strict";
import { InvalidRequestError } from "../../protocol.ts";
import { answerFromRecord, loadCodexRecords } from "./__fixtures__/codex.ts";
import { responsesAdapter } from "./mod.ts";

Deno.test("the adapter wires the Responses conversions", () => {
  const [record] = loadCodexRecords();
  assert.equal(responsesAdapter.name, "responses");
  assert.equal(responsesAdapter.toolCallIdPrefix, "call_");

  const request = responsesAdapter.parseRequest(record.body);
  assert.equal(request.protocol, "responses");
  assert.throws(() => responsesAdapter.parseRequest({ model: "m" }), InvalidRequestError);

  const answer = answerFromRecord(record);
  const body = responsesAdapter.toResponseBody(answer, request) as { id: string; status: string };
  assert.equal(body.id, "resp_turn1");
  assert.equal(body.status, "completed");
  const events = responsesAdapter.toStreamEvents(answer, request);
  assert.equal(events.at(-1)?.event, "response.completed");
  assert.equal(responsesAdapter.streamErrorEvents(502, "x")[0].event, "response.failed");
  assert.deepEqual(responsesAdapter.errorBody(400, "bad"), {
    error: { message: "bad", type: "invalid_request_error", param: null, code: null },
  });
});
