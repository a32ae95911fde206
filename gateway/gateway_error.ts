/**
 * An error with the HTTP status the caller should get; each protocol module gives it its shape.
 *
 * @module
 */
export class GatewayError extends Error {
  override name = "GatewayError";
  constructor(readonly status: number, message: string) {
    super(message);
  }
}
