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
//
// Each check waits for the page to show what it looks for, however long
// the browser and the job take on a loaded machine. Only a hang guard
// bounds the whole run: CHECK_TIMEOUT_MS (default 300000, five minutes)
// for everything from launching Chromium to the screenshot. A check that
// runs out of it fails with what it waited for and what the page showed.
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
const budgetMs = Number(process.env.CHECK_TIMEOUT_MS || 300000);
if (!(budgetMs > 0)) {
  console.error(`FAIL: CHECK_TIMEOUT_MS=${process.env.CHECK_TIMEOUT_MS}: want a positive number of milliseconds`);
  process.exit(2);
}
const started = Date.now();
const deadline = started + budgetMs;
// timeout is what is left of the hang guard, for each wait in turn.
const timeout = () => Math.max(1, deadline - Date.now());
const elapsed = () => ((Date.now() - started) / 1000).toFixed(1) + " s";

if (!existsSync(executablePath)) {
  console.error(`FAIL: no Chromium at ${executablePath} (apt-get install chromium, or set CHROMIUM)`);
  process.exit(1);
}

// pageState describes, in the page, what the checks look at.
function pageState() {
  const q = (s) => document.querySelector(s);
  const text = (s) => (q(s)?.textContent || "").trim();
  const lines = [
    `status: ${text("#status")}`,
    `job: ${text("#job-info")}`,
    `jobs listed: ${[...document.querySelectorAll("#jobs li[data-job]")].map((li) => `${li.dataset.job} (${text(`#jobs li[data-job="${li.dataset.job}"] .state`)})`).join(", ") || "none"}`,
  ];
  const tasks = [...document.querySelectorAll("#graph .task[data-task]")];
  lines.push(`task boxes: ${tasks.length}`);
  for (const t of tasks) {
    const detail = [...t.querySelectorAll(".line")].map((l) => l.textContent).filter((s) => s).join(" | ");
    lines.push(`  ${t.dataset.task}: rate ${t.dataset.rate ?? "none"} · ${detail}`);
  }
  const tput = q("#throughput"), lat = q("#latency");
  lines.push(`throughput chart: ${tput?.dataset.points} points, ${tput?.dataset.recoveryMarkers} failure markers, canvas ${q("#throughput canvas") ? "drawn" : "missing"}`);
  lines.push(`latency chart: ${lat?.dataset.points} points, canvas ${q("#latency canvas") ? "drawn" : "missing"}`);
  lines.push(`recoveries listed: ${document.querySelectorAll("#recoveries tr.recovery").length}`);
  lines.push(`rescales and leader changes listed: ${document.querySelectorAll("#changes tr.change").length}`);
  lines.push(`checkpoints listed: ${document.querySelectorAll("#checkpoints tbody tr[data-id]").length} ${text("#ckpt-summary")}`);
  return lines.join("\n");
}

const profile = mkdtempSync(join(tmpdir(), "weir-uitest-"));
let context, page;
const problems = [];

// step runs fn, which waits for the page to show what is named; if it
// fails, the error says what it waited for, for how long, and what the
// page showed.
const step = async (what, fn) => {
  try {
    await fn();
    console.log(`ok: ${what} (${elapsed()})`);
  } catch (e) {
    // Said at once, in case describing the page hangs too.
    console.error(`FAIL: ${what}: ${e.message.split("\n")[0]} (after ${elapsed()}; CHECK_TIMEOUT_MS=${budgetMs})`);
    let msg = "";
    if (page) {
      try {
        msg += "the page showed:\n" + (await page.evaluate(pageState)).replace(/^/gm, "  ");
      } catch (e2) {
        msg += "the page could not be described: " + e2.message.split("\n")[0];
      }
      try { await page.screenshot({ path: screenshot, fullPage: true, timeout: timeout() }); } catch {}
    }
    if (problems.length) msg += "\nthe page reported:\n  " + problems.join("\n  ");
    throw new Error(msg);
  }
};

try {
  await step("launch Chromium", async () => {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      timeout: timeout(),
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      viewport: { width: 1280, height: 1100 },
    });
  });
  page = context.pages()[0] || (await context.newPage());
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") problems.push("console error: " + m.text()); });
  page.on("response", (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`); });
  page.on("requestfailed", (r) => problems.push(`request failed: ${r.url()}: ${r.failure()?.errorText}`));

  await step(`open ${url}`, async () => {
    const r = await page.goto(url, { timeout: timeout() });
    if (!r || !r.ok()) throw new Error("HTTP " + (r && r.status()));
  });
  await step("a job is listed", () => page.waitForSelector("#jobs li[data-job]", { timeout: timeout() }));
  await step(`the graph shows ${wantTasks} task boxes`, () =>
    page.waitForFunction((n) => document.querySelectorAll("#graph .task[data-task]").length === n, wantTasks, { timeout: timeout() }));
  await step("the throughput chart has more than 2 points", () =>
    page.waitForFunction(() => Number(document.querySelector("#throughput")?.dataset.points) > 2 &&
      document.querySelector("#throughput canvas") !== null, null, { timeout: timeout() }));
  await step("a task shows a throughput above 0", () =>
    page.waitForFunction(() => [...document.querySelectorAll("#graph .task")].some((t) => Number(t.dataset.rate) > 0), null, { timeout: timeout() }));
  if (wantRecoveries > 0) {
    await step(`at least ${wantRecoveries} failure marker(s) on the throughput chart`, () =>
      page.waitForFunction((n) => Number(document.querySelector("#throughput")?.dataset.recoveryMarkers) >= n &&
        document.querySelectorAll("#recoveries tr.recovery").length >= n, wantRecoveries, { timeout: timeout() }));
  }
  await step("the latency chart receives percentiles", () =>
    page.waitForFunction(() => Number(document.querySelector("#latency")?.dataset.points) > 0 &&
      document.querySelector("#latency canvas") !== null, null, { timeout: timeout() }));
  await step("the checkpoint table lists checkpoints", () =>
    page.waitForSelector("#checkpoints tbody tr[data-id]", { timeout: timeout() }));
  await step("the table of rescales and leader changes is filled", () =>
    page.waitForSelector("#changes tbody tr", { timeout: timeout() }));
  // A few more polls, so that the screenshot has some history.
  const points = await page.$eval("#throughput", (e) => Number(e.dataset.points));
  await step("3 more polls charted", () =>
    page.waitForFunction((n) => Number(document.querySelector("#throughput")?.dataset.points) >= n, points + 3, { timeout: timeout() }));
  await step(`screenshot ${screenshot}`, () => page.screenshot({ path: screenshot, fullPage: true, timeout: timeout() }));
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
