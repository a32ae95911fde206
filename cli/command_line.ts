/**
 * The command line: the first argument names a verb (default `serve`), the rest are its flags.
 * Every failure is one line on stderr and exit status 1 (2 for an unknown verb).
 *
 * @module
 */
import { audit } from "./audit.ts";
import { inspect } from "./inspect.ts";
import { rolloutCommand } from "./rollout.ts";
import { serve } from "./serve.ts";
import { view } from "./view.ts";
import { USAGE } from "./usage.ts";

/**
 * Runs one command line. Returns the exit status, or `undefined` when the process should stay
 * up (`serve`, `view`) or end by itself once its work is done (`inspect`).
 */
export async function runCommandLine(args: readonly string[]): Promise<number | undefined> {
  const [verb = "serve", ...rest] = args;
  try {
    switch (verb) {
      case "serve":
        await serve(rest);
        return undefined;
      case "inspect":
        await inspect(rest);
        return undefined;
      case "audit":
        return await audit(rest);
      case "rollout":
        return await rolloutCommand(rest);
      case "view":
        return await view(rest);
      case "help":
      case "--help":
        console.log(USAGE);
        return 0;
      default:
        console.error(`unknown verb ${verb}\n\n${USAGE}`);
        return 2;
    }
  } catch (e) {
    console.error(`rollgate: ${(e as Error).message}`);
    return 1;
  }
}
