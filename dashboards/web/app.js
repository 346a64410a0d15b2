// Backbeat's web dashboard: plain JavaScript, SVG charts drawn from the JSON API (docs/api.md), no dependencies.
// The token lives in sessionStorage only (this tab); a link may carry it once as #token=... and it is removed
// from the address at once.
"use strict";

const REFRESH_MS = 5000;
const SVG = "http://www.w3.org/2000/svg";
const $ = (id) => document.getElementById(id);
const state = { token: null, artist: null, zone: "UTC", viewerZone: viewersZone(), inViewersZone: false, range: "28d", asOf: null, timer: null };

// This browser's zone (or the link's #tz=, which also opens the page in it); UTC when the browser does not say.
function viewersZone() {
  try { return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"; } catch { return "UTC"; }
}
// The zone the page's days are read in: the artist's, or the viewer's when chosen (and it is another).
function readZone() { return state.inViewersZone ? state.viewerZone : state.zone; }

// ---- Formatting -------------------------------------------------------------------------------------------------

const integer = new Intl.NumberFormat("en-US");
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });
function money(amount, currency) {
  const value = Number(amount);
  try {
    return new Intl.NumberFormat("en-US", { style: "currency", currency, maximumFractionDigits: 2 }).format(value);
  } catch {
    return `${value.toFixed(2)} ${currency}`;
  }
}
function day(date) { return date.toISOString().slice(0, 10); }
function addDays(date, days) { const copy = new Date(date); copy.setUTCDate(copy.getUTCDate() + days); return copy; }
// Days are calendar days held as Date objects at UTC midnight; the API reads a date as the artist's local day, or the
// viewer's with `tz`. The day the ranges end on: today in that zone by this browser's clock, or the link's
// #as_of=YYYY-MM-DD.
function todayLocal() {
  if (state.asOf) return new Date(state.asOf + "T00:00:00Z");
  let text;
  try {
    text = new Intl.DateTimeFormat("en-CA", { timeZone: readZone(), year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date());
  } catch {
    text = new Date().toISOString().slice(0, 10);
  }
  return new Date(text + "T00:00:00Z");
}

// ---- Ranges: [from, to) in whole days of the artist, and the granularity each chart uses ------------------------

function currentRange() {
  const today = todayLocal();
  const tomorrow = addDays(today, 1);
  switch (state.range) {
    case "7d": return { from: addDays(today, -6), to: tomorrow };
    case "12m": {
      const from = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 11, 1));
      return { from, to: new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() + 1, 1)) };
    }
    case "custom": {
      const from = $("custom-from").valueAsDate, last = $("custom-to").valueAsDate;
      if (from && last && from <= last) return { from, to: addDays(last, 1) };
      return { from: addDays(today, -27), to: tomorrow };
    }
    default: return { from: addDays(today, -27), to: tomorrow };
  }
}
function spanDays(range) { return Math.round((range.to - range.from) / 86400000); }
// Every period of `granularity` ("day" or "month") in the range, as the date the API's period_start begins with.
function periodStarts(range, granularity) {
  const starts = [];
  let start = granularity === "month" ? new Date(Date.UTC(range.from.getUTCFullYear(), range.from.getUTCMonth(), 1)) : new Date(range.from);
  while (start < range.to) {
    starts.push(start.toISOString().slice(0, 10));
    start = granularity === "month" ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1)) : addDays(start, 1);
  }
  return starts;
}

// ---- API ----------------------------------------------------------------------------------------------------------

class APIError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}
async function api(path) {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${state.token}` } });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new APIError(response.status, body.error ? body.error.message : `HTTP ${response.status}`);
  return body;
}
// An artist endpoint's path; a read of a range takes `tz` when the page is in the viewer's zone (the summary's 28 days
// stay the artist's).
function artistPath(endpoint, parameters) {
  const withZone = parameters && parameters.from && readZone() !== state.zone ? { ...parameters, tz: readZone() } : parameters;
  const query = new URLSearchParams(withZone).toString();
  return `/v1/artists/${encodeURIComponent(state.artist)}/${endpoint}${query ? "?" + query : ""}`;
}

// ---- SVG drawing ------------------------------------------------------------------------------------------------

function element(name, attributes, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes || {})) node.setAttribute(key, value);
  if (text !== undefined) node.textContent = text;
  return node;
}
function seriesColor(index) { return `var(--s${index % 8})`; }
function clear(svg, width, height) {
  svg.replaceChildren();
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
}
function empty(svg) {
  clear(svg, 300, 40);
  svg.appendChild(element("text", { x: 0, y: 24 }, "No data in this range"));
}

// The drawing width of a wide chart: its width on screen, so that text keeps its size on a phone.
function widthOf(svg) { return Math.max(300, Math.round(svg.getBoundingClientRect().width) || 900); }

// Vertical bars with a y axis; labels under some bars.
function drawColumns(svg, points, labelOf) {
  if (!points.length || points.every((p) => p.value === 0)) return empty(svg);
  const width = widthOf(svg), height = 240, left = 44, bottom = 22, top = 8;
  clear(svg, width, height);
  const max = Math.max(...points.map((p) => p.value));
  const plotHeight = height - bottom - top, step = (width - left) / points.length;
  for (let i = 0; i <= 4; i++) {
    const y = top + plotHeight - (plotHeight * i) / 4;
    svg.appendChild(element("line", { x1: left, x2: width, y1: y, y2: y, class: "grid" }));
    svg.appendChild(element("text", { x: left - 6, y: y + 4, "text-anchor": "end" }, compact.format((max * i) / 4)));
  }
  const every = Math.max(1, Math.ceil(points.length / Math.max(2, Math.floor(width / 80))));
  points.forEach((point, i) => {
    const barHeight = max === 0 ? 0 : (plotHeight * point.value) / max;
    const bar = element("rect", {
      x: left + i * step + step * 0.15, width: Math.max(1, step * 0.7), y: top + plotHeight - barHeight, height: barHeight, class: "bar",
    });
    bar.appendChild(element("title", {}, `${labelOf(point)}: ${integer.format(point.value)}`));
    svg.appendChild(bar);
    if (i % every === 0) svg.appendChild(element("text", { x: left + i * step + step / 2, y: height - 6, "text-anchor": "middle" }, labelOf(point)));
  });
}

// Horizontal bars with their values, most first. The texts are laid out first and measured, so that the bars take
// only the room the widest label and value leave: a total of 1,000,000 is neither clipped nor drawn over.
function drawRows(svg, rows) {
  if (!rows.length) return empty(svg);
  const width = 280, rowHeight = 22, gap = 6;
  clear(svg, width, rows.length * rowHeight);
  const max = Math.max(...rows.map((r) => r.value), 1);
  const labels = rows.map((row, i) => svg.appendChild(element("text", { x: 0, y: i * rowHeight + 16 }, row.label)));
  const values = rows.map((row, i) => svg.appendChild(element("text", {
    x: width, y: i * rowHeight + 16, "text-anchor": "end", "data-label": row.label, "data-value": row.value,
  }, integer.format(row.value))));
  const labelWidth = Math.min(width / 3, Math.max(40, ...labels.map(textWidth))) + gap;
  const valueWidths = values.map(textWidth);
  values.forEach((text, i) => text.setAttribute("data-width", valueWidths[i].toFixed(1)));
  const valueWidth = Math.max(...valueWidths) + gap;
  rows.forEach((row, i) => svg.insertBefore(element("rect", {
    x: labelWidth, y: i * rowHeight + 5, height: 14, rx: 3, class: "bar",
    width: Math.max(1, ((width - labelWidth - valueWidth) * row.value) / max),
  }), labels[0]));
}

// The width `text` takes as drawn (an estimate where the page is not laid out).
function textWidth(text) {
  const measured = text.getComputedTextLength();
  return measured > 0 ? measured : text.textContent.length * 7;
}

// A donut of shares, with a legend.
function drawDonut(svg, legend, slices) {
  legend.replaceChildren();
  const total = slices.reduce((sum, s) => sum + s.value, 0);
  if (!total) return empty(svg);
  const size = 200, radius = 80, inner = 50, centre = size / 2;
  clear(svg, size, size);
  let angle = -Math.PI / 2;
  slices.forEach((slice, i) => {
    const sweep = (slice.value / total) * Math.PI * 2;
    const end = angle + Math.min(sweep, Math.PI * 2 - 1e-6);
    const large = sweep > Math.PI ? 1 : 0;
    const point = (r, a) => `${centre + r * Math.cos(a)} ${centre + r * Math.sin(a)}`;
    const path = `M ${point(radius, angle)} A ${radius} ${radius} 0 ${large} 1 ${point(radius, end)} L ${point(inner, end)} A ${inner} ${inner} 0 ${large} 0 ${point(inner, angle)} Z`;
    const arc = element("path", { d: path, fill: seriesColor(i) });
    arc.appendChild(element("title", {}, `${slice.label}: ${integer.format(slice.value)}`));
    svg.appendChild(arc);
    angle += sweep;
    const item = document.createElement("li");
    item.dataset.platform = slice.label;
    item.dataset.streams = slice.value;
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = seriesColor(i);
    item.append(swatch, `${slice.label} ${(slice.share * 100).toFixed(1)}% (${integer.format(slice.value)})`);
    legend.appendChild(item);
  });
  svg.appendChild(element("text", { x: centre, y: centre + 4, "text-anchor": "middle" }, compact.format(total)));
}

// One line over `periods`, scaled to its own largest value (the axis's top is the chart's `data-max`).
function drawLine(svg, periods, values, color, labelOf, height = 240) {
  if (!periods.length) return empty(svg);
  const width = widthOf(svg), left = 56, bottom = 22, top = 8;
  clear(svg, width, height);
  const max = Math.max(...values, 0) || 1;
  svg.dataset.max = max;
  const plotHeight = height - bottom - top;
  const x = (i) => left + (periods.length === 1 ? (width - left) / 2 : ((width - left - 10) * i) / (periods.length - 1));
  const y = (v) => top + plotHeight - (plotHeight * v) / max;
  for (let i = 0; i <= 4; i++) {
    svg.appendChild(element("line", { x1: left, x2: width, y1: y((max * i) / 4), y2: y((max * i) / 4), class: "grid" }));
    svg.appendChild(element("text", { x: left - 6, y: y((max * i) / 4) + 4, "text-anchor": "end" }, compact.format((max * i) / 4)));
  }
  const every = Math.max(1, Math.ceil(periods.length / Math.max(2, Math.floor(width / 80))));
  periods.forEach((period, i) => {
    if (i % every === 0) svg.appendChild(element("text", { x: x(i), y: height - 6, "text-anchor": "middle" }, labelOf(period)));
  });
  svg.appendChild(element("polyline", { points: values.map((v, i) => `${x(i)},${y(v)}`).join(" "), fill: "none", stroke: color, "stroke-width": 2.5 }));
  values.forEach((v, i) => svg.appendChild(element("circle", { cx: x(i), cy: y(v), r: 3, fill: color })));
}

// ---- Panels -------------------------------------------------------------------------------------------------------

function setNumber(id, value, text) {
  const node = $(id);
  node.dataset.value = value === null || value === undefined ? "" : String(value);
  node.textContent = text;
}
function periodLabel(start, granularity) {
  return granularity === "month" ? start.slice(0, 7) : start.slice(5, 10);
}

async function refreshSummary() {
  const summary = await api(artistPath("summary", state.asOf ? { as_of: state.asOf } : {}));
  setNumber("card-streams", summary.streams_28d, integer.format(summary.streams_28d));
  // Absent after a change of the artist's zone without the archive: the card says why on hover.
  const listeners = summary.monthly_listeners;
  setNumber("card-listeners", listeners, listeners === undefined ? "–" : integer.format(listeners));
  $("card-listeners").title = summary.listeners_unavailable || "";
  const growth = summary.growth_percent;
  setNumber("card-growth", growth, growth === undefined || growth === null ? "–" : `${growth > 0 ? "+" : ""}${growth}%`);
  const revenue = summary.revenue_this_month || [];
  const card = $("card-revenue");
  card.dataset.value = revenue.map((r) => `${r.currency}:${r.amount}`).join(",");
  card.textContent = revenue.length ? revenue.map((r) => money(r.amount, r.currency)).join(" · ") : money(0, "EUR");
  setNumber("card-followers", summary.net_followers_28d, `${summary.net_followers_28d > 0 ? "+" : ""}${integer.format(summary.net_followers_28d)}`);
}

async function refreshStreams(range) {
  const granularity = spanDays(range) > 92 ? "month" : "day";
  const answer = await api(artistPath("streams", { from: day(range.from), to: day(range.to), granularity }));
  const points = answer.series.map((p) => ({ start: p.period_start, value: p.streams }));
  drawColumns($("streams-chart"), points, (p) => periodLabel(p.start, granularity));
  setNumber("streams-total", answer.totals.streams, `${integer.format(answer.totals.streams)} in range, by ${granularity}`);
}

async function refreshPlatforms(range) {
  const answer = await api(artistPath("platforms", { from: day(range.from), to: day(range.to) }));
  drawDonut($("platforms-chart"), $("platforms-legend"),
    answer.platforms.map((p) => ({ label: p.platform, value: p.streams, share: p.share })));
}

async function refreshTopTracks(range) {
  const answer = await api(artistPath("tracks/top", { from: day(range.from), to: day(range.to), limit: 10 }));
  const list = $("top-tracks");
  list.replaceChildren();
  if (!answer.tracks.length) {
    const none = document.createElement("li");
    none.className = "empty";
    none.textContent = "No streams in this range";
    list.appendChild(none);
  }
  for (const track of answer.tracks) {
    const item = document.createElement("li");
    item.dataset.track = track.track_id;
    item.dataset.streams = track.streams;
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = track.track_id.includes(":") ? track.track_id.split(":").slice(1).join(":") : track.track_id;
    name.title = track.track_id;
    const streams = document.createElement("span");
    streams.className = "streams";
    streams.textContent = integer.format(track.streams);
    item.append(name, streams);
    list.appendChild(item);
  }
}

async function refreshDemographics(range) {
  const answer = await api(artistPath("demographics", { from: day(range.from), to: day(range.to) }));
  drawRows($("age-chart"), answer.age_ranges.map((r) => ({ label: r.age_range, value: r.streams })));
  drawRows($("gender-chart"), answer.genders.map((r) => ({ label: r.gender, value: r.streams })));
  drawRows($("country-chart"), answer.countries.slice(0, 8).map((r) => ({ label: r.country, value: r.streams })));
}

async function refreshRevenue(range) {
  const granularity = spanDays(range) >= 60 ? "month" : "day";
  const answer = await api(artistPath("revenue", { from: day(range.from), to: day(range.to), granularity }));
  const periods = periodStarts(range, granularity);
  const currencies = [...new Set(answer.series.map((p) => p.currency))].sort();
  // One chart per currency, each on its own scale: amounts in yen would flatten amounts in euros on a shared one.
  const charts = $("revenue-charts");
  charts.replaceChildren();
  if (!currencies.length) empty(charts.appendChild(element("svg", { role: "img", "aria-label": "Revenue by period" })));
  // Every chart is placed before any is drawn: each is drawn at its width on screen, which depends on how many share
  // the row.
  const svgs = currencies.map((currency, index) => {
    const chart = charts.appendChild(document.createElement("div"));
    chart.className = "currency-chart";
    chart.dataset.currency = currency;
    const name = chart.appendChild(document.createElement("span"));
    name.className = "currency";
    name.style.color = seriesColor(index);
    name.textContent = currency;
    return chart.appendChild(element("svg", { role: "img", "aria-label": `Revenue in ${currency} by period` }));
  });
  currencies.forEach((currency, index) => {
    const values = periods.map((period) => answer.series
      .filter((p) => p.currency === currency && p.period_start.slice(0, 10) === period)
      .reduce((sum, p) => sum + Number(p.amount), 0));
    drawLine(svgs[index], periods, values, seriesColor(index), (p) => periodLabel(p, granularity), 160);
  });
  const total = $("revenue-total");
  total.dataset.value = answer.totals.map((t) => `${t.currency}:${t.amount}`).join(",");
  total.textContent = answer.totals.length ? `${answer.totals.map((t) => money(t.amount, t.currency)).join(" · ")} in range, by ${granularity}` : "";
}

async function refreshSocial(range) {
  const answer = await api(artistPath("social", { from: day(range.from), to: day(range.to), granularity: "all" }));
  const byPlatform = new Map();
  for (const total of answer.totals) {
    if (total.action === "unfollow") continue;
    byPlatform.set(total.platform, (byPlatform.get(total.platform) || 0) + total.count);
  }
  drawRows($("social-chart"), [...byPlatform].map(([label, value]) => ({ label, value })).sort((a, b) => b.value - a.value));
}

// The artist's portfolio pages: views and unique visitors per period (every period drawn, those without views at
// zero), the sections most viewed, the calls to action most clicked, the unique visitors of the referrers most
// viewed from, and the funnel of sessions: with a view, with a section view too, with a call to action clicked too.
async function refreshPage(range) {
  const granularity = spanDays(range) > 92 ? "month" : "day";
  const from = day(range.from), to = day(range.to);
  const [page, sections, ctas, funnel, sources] = await Promise.all([
    api(artistPath("page", { from, to, granularity })),
    api(artistPath("page/sections", { from, to, limit: 8 })),
    api(artistPath("page/ctas", { from, to, granularity: "all" })),
    api(artistPath("page/funnel", { from, to, granularity: "all" })),
    api(artistPath("page/sources", { from, to, limit: 8 })),
  ]);
  if (sources.visitors_unavailable) {
    empty($("page-referrers-chart"));
    setNumber("page-referrers-note", null, sources.visitors_unavailable);
  } else {
    drawRows($("page-referrers-chart"), sources.referrers.map((r) => ({ label: r.referrer, value: r.visitors })));
    setNumber("page-referrers-note", sources.referrers.length, "");
  }
  const views = new Map(page.series.map((p) => [p.period_start.slice(0, 10), p.views]));
  const points = periodStarts(range, granularity).map((start) => ({ start, value: views.get(start) || 0 }));
  drawColumns($("page-chart"), points, (p) => periodLabel(p.start, granularity));
  setNumber("page-total", page.totals.views,
    `${integer.format(page.totals.views)} views in range, by ${granularity} · ${integer.format(page.totals.cta_clicks)} clicks`);
  drawRows($("page-sections-chart"), sections.sections.map((s) => ({ label: s.section_id, value: s.views })));
  drawRows($("page-ctas-chart"), ctas.totals.map((c) => ({ label: c.action_type, value: c.clicks })));
  // Visitors are counted per whole day of the artist's zone: read in another, the answer says why there are none.
  if (page.visitors_unavailable) {
    empty($("page-visitors-chart"));
    setNumber("page-visitors-total", null, page.visitors_unavailable);
  } else {
    const visitors = new Map(page.series.map((p) => [p.period_start.slice(0, 10), p.visitors || 0]));
    drawColumns($("page-visitors-chart"), periodStarts(range, granularity).map((start) => ({ start, value: visitors.get(start) || 0 })),
      (p) => periodLabel(p.start, granularity));
    setNumber("page-visitors-total", page.totals.visitors, `${integer.format(page.totals.visitors || 0)} unique visitors in range`);
  }
  const stages = funnel.totals;
  drawRows($("page-funnel-chart"), stages.sessions === 0 ? [] : [
    { label: "Viewed the page", value: stages.sessions },
    { label: "Viewed a section", value: stages.sessions_with_section_view },
    { label: "Clicked a call to action", value: stages.sessions_with_cta_click },
  ]);
}

// The artist's reporting zone, which its days are counted in, and the choice of reading them in the viewer's.
async function refreshZone() {
  state.zone = (await api(artistPath("zone"))).zone;
  const zone = $("zone");
  zone.dataset.zone = state.zone;
  zone.textContent = `Artist's zone: ${state.zone}`;
  const select = $("days-in");
  select.replaceChildren(new Option(`Days in ${state.zone} (the artist's)`, "artist"));
  if (state.viewerZone !== state.zone) select.appendChild(new Option(`Days in ${state.viewerZone} (yours)`, "viewer"));
  select.value = state.inViewersZone && state.viewerZone !== state.zone ? "viewer" : "artist";
  select.hidden = select.options.length < 2;
  select.dataset.readZone = readZone();
}

async function refresh() {
  if (!state.token || !state.artist) return;
  const status = $("status");
  try {
    await refreshZone();
    const range = currentRange();
    await Promise.all([refreshSummary(), refreshStreams(range), refreshPlatforms(range), refreshTopTracks(range),
      refreshDemographics(range), refreshRevenue(range), refreshSocial(range), refreshPage(range)]);
    status.className = "";
    status.textContent = `${state.artist}, ${day(range.from)} to ${day(addDays(range.to, -1))} in ${readZone()} · updated ${new Date().toLocaleTimeString()}`;
    document.body.dataset.refreshes = String(Number(document.body.dataset.refreshes || 0) + 1);
  } catch (error) {
    status.className = "error";
    status.textContent = error.message;
    if (error.status === 401) logout();
  }
}

// ---- Sign-in and controls -----------------------------------------------------------------------------------------

async function start() {
  $("login").hidden = true;
  try {
    const list = await api("/v1/artists");
    const select = $("artist");
    select.replaceChildren(...list.artists.map((artist) => new Option(artist, artist)));
    const wanted = new URLSearchParams(location.hash.slice(1)).get("artist") || sessionStorage.getItem("backbeat-artist");
    state.artist = list.artists.includes(wanted) ? wanted : list.artists[0] || null;
    if (state.artist) select.value = state.artist;
    select.disabled = list.role === "artist";
  } catch (error) {
    if (error.status === 401) return logout("That token was not accepted.");
    $("status").textContent = error.message;
  }
  $("controls").hidden = false;
  $("dashboard").hidden = false;
  markRange();
  await refresh();
  clearInterval(state.timer);
  state.timer = setInterval(refresh, REFRESH_MS);
}

function logout(message) {
  sessionStorage.removeItem("backbeat-token");
  state.token = null;
  clearInterval(state.timer);
  $("controls").hidden = true;
  $("dashboard").hidden = true;
  $("login").hidden = false;
  if (message) $("token").placeholder = message;
}

function markRange() {
  for (const button of document.querySelectorAll("[data-range]")) button.setAttribute("aria-pressed", String(button.dataset.range === state.range));
  $("custom-range").hidden = state.range !== "custom";
}

function init() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("token")) sessionStorage.setItem("backbeat-token", fragment.get("token"));
  if (fragment.get("range")) state.range = fragment.get("range");
  if (fragment.get("tz")) { state.viewerZone = fragment.get("tz"); state.inViewersZone = true; }
  if (/^\d{4}-\d{2}-\d{2}$/.test(fragment.get("as_of") || "") && !isNaN(Date.parse(fragment.get("as_of")))) state.asOf = fragment.get("as_of");
  if (location.hash) history.replaceState(null, "", location.pathname + location.search);
  if (fragment.get("artist")) sessionStorage.setItem("backbeat-artist", fragment.get("artist"));
  state.token = sessionStorage.getItem("backbeat-token");

  $("login").addEventListener("submit", (event) => {
    event.preventDefault();
    state.token = $("token").value.trim();
    sessionStorage.setItem("backbeat-token", state.token);
    $("token").value = "";
    start();
  });
  $("logout").addEventListener("click", () => logout());
  $("artist").addEventListener("change", (event) => {
    state.artist = event.target.value;
    sessionStorage.setItem("backbeat-artist", state.artist);
    refresh();
  });
  $("days-in").addEventListener("change", (event) => { state.inViewersZone = event.target.value === "viewer"; refresh(); });
  for (const button of document.querySelectorAll("[data-range]")) {
    button.addEventListener("click", () => { state.range = button.dataset.range; markRange(); refresh(); });
  }
  for (const input of [$("custom-from"), $("custom-to")]) input.addEventListener("change", refresh);
  const today = todayLocal();
  $("custom-from").value = day(addDays(today, -27));
  $("custom-to").value = day(today);

  if (state.token) start(); else logout();
}

init();
