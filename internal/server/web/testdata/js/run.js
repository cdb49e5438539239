// Runs the UI modules' tests in the browser (web_browser_test.go imports
// this module and calls run): every suite exports tests, name → function.

const SUITES = ['./model.test.js', './sse.test.js', './dom.test.js', './appmodel.test.js'];

export async function run() {
  const failures = [];
  let count = 0;
  for (const suite of SUITES) {
    const mod = await import(suite);
    for (const [name, fn] of Object.entries(mod.tests)) {
      count++;
      try {
        await fn();
      } catch (e) {
        failures.push(`${suite} ${name}: ${e.message}`);
      }
    }
  }
  return { count, failures };
}
