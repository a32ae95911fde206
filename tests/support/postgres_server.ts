/**
 * A real PostgreSQL server for tests: Debian's `postgresql` binaries (under
 * `/usr/lib/postgresql/<version>/bin`), a cluster made with `initdb` in a temporary directory and
 * started on a free loopback port, removed by `stop`. The server refuses to run as root, so when
 * the tests run as root the cluster belongs to the unprivileged `postgres` user (which the Debian
 * package creates) and the binaries run through `runuser`. `restart` stops and starts the same
 * cluster (a database fault mid-run); `stopServer`/`startServer` leave it down in between.
 *
 * @module
 */

export interface PostgresServer {
  /** `postgres://…` for the test database (trust authentication on loopback). */
  url: string;
  port: number;
  /** Stops the server (fast shutdown: open connections are closed) and leaves it down. */
  stopServer(): Promise<void>;
  /** Starts the stopped server again on the same port and data. */
  startServer(): Promise<void>;
  /** Stops and removes the cluster. */
  stop(): Promise<void>;
}

const PG_ROOT = "/usr/lib/postgresql";

/** The newest installed server's `bin` directory, or `undefined` when none is installed. */
export function postgresBin(): string | undefined {
  try {
    const versions = [...Deno.readDirSync(PG_ROOT)]
      .map((e) => e.name)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const bin = `${PG_ROOT}/${v}/bin`;
      try {
        Deno.statSync(`${bin}/initdb`);
        return bin;
      } catch { /* a client-only version */ }
    }
  } catch { /* not installed */ }
  return undefined;
}

/** Why PostgreSQL tests cannot run here; undefined when they can. */
export function postgresMissing(): string | undefined {
  return postgresBin() ? undefined : "no PostgreSQL server (apt-get install postgresql)";
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

const isRoot = Deno.uid() === 0;

/** Runs a server binary as the unprivileged `postgres` user when we are root. */
async function runPg(bin: string, args: string[]): Promise<string> {
  const cmd = isRoot
    ? new Deno.Command("runuser", { args: ["-u", "postgres", "--", bin, ...args] })
    : new Deno.Command(bin, { args });
  const out = await cmd.output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${bin} ${args.join(" ")} failed:\n${text}`);
  return text;
}

/**
 * Makes a cluster in a temporary directory and starts it on a free loopback port; `settings`:
 * more server settings (`name=value`), e.g. a bench's statement statistics.
 */
export async function startPostgres(settings: string[] = []): Promise<PostgresServer> {
  const bin = postgresBin();
  if (!bin) throw new Error(postgresMissing());
  const dir = await Deno.makeTempDir({ prefix: "rollgate-pg-" });
  if (isRoot) {
    const pg = await new Deno.Command("id", { args: ["-u", "postgres"] }).output();
    const gid = await new Deno.Command("id", { args: ["-g", "postgres"] }).output();
    if (!pg.success) throw new Error("no postgres user (apt-get install postgresql creates it)");
    const uid = Number(new TextDecoder().decode(pg.stdout));
    await Deno.chown(dir, uid, Number(new TextDecoder().decode(gid.stdout)));
  }
  const data = `${dir}/data`;
  await runPg(`${bin}/initdb`, [
    "-D",
    data,
    "-U",
    "rollgate",
    "--auth=trust",
    "--no-sync",
    "-E",
    "UTF8",
  ]);
  const port = freePort();
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    "-c fsync=off", // a test cluster: durability across power loss is not what is tested
    "-c max_connections=200",
    ...settings.map((setting) => `-c ${setting}`),
  ].join(" ");
  const start = () =>
    runPg(`${bin}/pg_ctl`, [
      "-D",
      data,
      "-o",
      options,
      "-l",
      `${dir}/log`,
      "-w",
      "-t",
      "30",
      "start",
    ]);
  const stopServer = async () => {
    await runPg(`${bin}/pg_ctl`, ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"]);
  };
  await start();
  return {
    url: `postgres://rollgate@127.0.0.1:${port}/postgres`,
    port,
    stopServer,
    startServer: async () => {
      await start();
    },
    async stop() {
      await stopServer().catch(() => {});
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}
