/**
 * The pieces of an answer shown to clients while it is being generated (reasoning and text
 * deltas from the streaming parser), buffered so a client that attaches late (a retry of a
 * pending turn) still gets every piece in order.
 *
 * @module
 */

export interface AnswerPiece {
  kind: "reasoning" | "text";
  delta: string;
}

export class LiveAnswer {
  readonly #pieces: AnswerPiece[] = [];
  #wake: (() => void)[] = [];
  #closed = false;

  push(piece: AnswerPiece): void {
    if (this.#closed || piece.delta === "") return;
    this.#pieces.push(piece);
    this.#notify();
  }

  /** No more pieces: generation ended (the answer, or an error, is on the turn). */
  close(): void {
    this.#closed = true;
    this.#notify();
  }

  get closed(): boolean {
    return this.#closed;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = [];
    wake.forEach((w) => w());
  }

  async *[Symbol.asyncIterator](): AsyncIterator<AnswerPiece> {
    let i = 0;
    for (;;) {
      while (i < this.#pieces.length) yield this.#pieces[i++];
      if (this.#closed) return;
      await new Promise<void>((r) => this.#wake.push(r));
    }
  }
}
