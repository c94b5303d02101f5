// check.mjs drives the weir dashboard in headless Chromium and checks that
// it shows a running job.
//
//   node check.mjs URL TASKS RECOVERIES SCREENSHOT
//
// URL         the dashboard (the server's base URL)
// TASKS       how many task boxes the graph must show
// RECOVERIES  how many failure markers the throughput chart must show at
//             least (0: none required)
// SCREENSHOT  where to save a PNG of the page
//
// It uses the system's Chromium (/usr/bin/chromium, or $CHROMIUM) through
// playwright-core, which never downloads a browser. It exits 0 when every
// check passed, 1 with a message otherwise.
import { chromium } from "playwright-core";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, tasksArg, recoveriesArg, screenshot] = process.argv.slice(2);
if (!url || !tasksArg || recoveriesArg == null || !screenshot) {
  console.error("usage: node check.mjs URL TASKS RECOVERIES SCREENSHOT");
  process.exit(2);
}
const wantTasks = Number(tasksArg), wantRecoveries = Number(recoveriesArg);
const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";
const timeout = Number(process.env.CHECK_TIMEOUT_MS || 30000);

if (!existsSync(executablePath)) {
  console.error(`FAIL: no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM)`);
  process.exit(1);
}

const profile = mkdtempSync(join(tmpdir(), "weir-uitest-"));
let context;
const problems = [];
try {
  context = await chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    viewport: { width: 1280, height: 1100 },
  });
  const page = context.pages()[0] || (await context.newPage());
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") problems.push("console error: " + m.text()); });
  page.on("response", (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`); });
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}: ${r.failure()?.errorText}`));

  const step = async (what, fn) => {
    try {
      await fn();
      console.log("ok: " + what);
    } catch (e) {
      const msg = `FAIL: ${what}: ${e.message.split("\n")[0]}`;
      try { await page.screenshot({ path: screenshot, fullPage: true }); } catch {}
      throw new Error(problems.length ? msg + "\n" + problems.join("\n") : msg);
    }
  };

  await step(`open ${url}`, async () => {
    const r = await page.goto(url, { timeout });
    if (!r || !r.ok()) throw new Error("HTTP " + (r && r.status()));
  });
  await step("a job is listed", () => page.waitForSelector("#jobs li[data-job]", { timeout }));
  await step(`the graph shows ${wantTasks} task boxes`, () =>
    page.waitForFunction((n) => document.querySelectorAll("#graph .task[data-task]").length === n, wantTasks, { timeout }));
  await step("the throughput chart has more than 2 points", () =>
    page.waitForFunction(() => Number(document.querySelector("#throughput")?.dataset.points) > 2 &&
      document.querySelector("#throughput canvas") !== null, null, { timeout }));
  await step("a task shows a throughput above 0", () =>
    page.waitForFunction(() => [...document.querySelectorAll("#graph .task")].some((t) => Number(t.dataset.rate) > 0), null, { timeout }));
  if (wantRecoveries > 0) {
    await step(`at least ${wantRecoveries} failure marker(s) on the throughput chart`, () =>
      page.waitForFunction((n) => Number(document.querySelector("#throughput")?.dataset.recoveryMarkers) >= n &&
        document.querySelectorAll("#recoveries tr.recovery").length >= n, wantRecoveries, { timeout }));
  }
  await step("the latency chart receives percentiles", () =>
    page.waitForFunction(() => Number(document.querySelector("#latency")?.dataset.points) > 0 &&
      document.querySelector("#latency canvas") !== null, null, { timeout }));
  await step("the checkpoint table lists checkpoints", () =>
    page.waitForSelector("#checkpoints tbody tr[data-id]", { timeout }));
  // Let a few more polls come in so the screenshot has some history.
  await page.waitForTimeout(Number(process.env.CHECK_SETTLE_MS || 3000));
  await step(`screenshot ${screenshot}`, () => page.screenshot({ path: screenshot, fullPage: true }));
  if (problems.length) throw new Error("FAIL: the page reported errors:\n" + problems.join("\n"));
  const names = await page.$$eval("#graph .task", (ts) => ts.map((t) => t.dataset.task));
  console.log("PASS: tasks " + JSON.stringify(names));
} catch (e) {
  console.error(e.message);
  process.exitCode = 1;
} finally {
  if (context) await context.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
}
