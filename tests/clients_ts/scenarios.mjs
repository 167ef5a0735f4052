// What every client script here shares: it runs one named scenario's calls in order and prints one JSON
// object, for each call {"ok": what it returned} or {"error": what it raised, as the script's own
// `described` tells it}, which tests/clients_ts/nodeclients.py reads.
//
//   const { call, run } = recorder(described);
//   ... the scenarios, each making its calls through `call` ...
//   await run(SCENARIOS, scenario);

export function recorder(described) {
  const results = {};

  // Runs one call and keeps what it gave under `name`; answers the value, or undefined when it raised.
  async function call(name, work) {
    try {
      const value = await work();
      results[name] = { ok: value === undefined ? null : value };
      return value;
    } catch (error) {
      results[name] = { error: described(error) };
      return undefined;
    }
  }

  // Runs scenarios[name] and prints what its calls gave; an unknown name exits 2, naming the known ones.
  async function run(scenarios, name) {
    if (!(name in scenarios)) {
      console.error(`unknown scenario ${name}; one of: ${Object.keys(scenarios).join(", ")}`);
      process.exit(2);
    }
    try {
      await scenarios[name]();
    } catch (error) {
      // A call the rest depended on failed: what was gathered so far says which.
      results.aborted = { error: described(error) };
    }
    console.log(JSON.stringify(results));
  }

  return { call, run };
}
