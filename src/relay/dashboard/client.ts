// The status page's script, run by the browser: plain ES2017, no dependencies, DOM built with
// textContent (no HTML from data). It renders the embedded /status.json document, polls for the
// next every REFRESH_MS (without the directory), and fetches the directory again only when its
// stamp changes. Charts are inline SVG drawn here from the sampler's series. Every time is UTC.
export const CLIENT_SCRIPT = String.raw`
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var data = JSON.parse(document.getElementById('initial').textContent);
  var directory = data.directory || null, dirStamp = data.directoryStamp, dirLoading = false;
  var sort = { key: 'hop', dir: 1 }, stateFilter = '', failures = 0, lastOk = data.now;

  function $(id) { return document.getElementById(id); }
  function el(tag, text, cls) { var e = document.createElement(tag); if (text !== undefined && text !== null) e.textContent = String(text); if (cls) e.className = cls; return e; }
  function svg(tag, attrs) { var e = document.createElementNS(SVG, tag); for (var k in attrs) e.setAttribute(k, attrs[k]); return e; }
  function int(n) { return n === null || n === undefined ? '-' : Number(n).toLocaleString('en-US'); }
  function num(v, unit) { if (v === null || v === undefined) return '-'; var a = Math.abs(v); return (Number.isInteger(v) || a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) : v.toFixed(3)) + (unit || ''); }
  function mib(b) { return b >= 1073741824 ? (b / 1073741824).toFixed(2) + ' GiB' : (b / 1048576).toFixed(1) + ' MiB'; }
  function pad(n) { return n < 10 ? '0' + n : String(n); }
  function utc(ms, seconds) {
    if (ms === null || ms === undefined) return '-';
    var d = new Date(ms), now = new Date(data.now);
    var time = pad(d.getUTCHours()) + ':' + pad(d.getUTCMinutes()) + (seconds ? ':' + pad(d.getUTCSeconds()) : '');
    var sameDay = d.toISOString().slice(0, 10) === now.toISOString().slice(0, 10);
    return (sameDay ? '' : d.toISOString().slice(0, 10) + ' ') + time + ' UTC';
  }
  function span(s) { s = Math.abs(s); return s < 90 ? Math.round(s) + ' s' : s < 5400 ? Math.round(s / 60) + ' min' : s < 172800 ? Math.round(s / 3600) + ' h' : Math.round(s / 86400) + ' d'; }
  function relative(ms) { if (!ms) return ''; var s = (ms - data.now) / 1000; return s >= 0 ? 'in ' + span(s) : span(s) + ' ago'; }
  function uptime(s) { var d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60); return (d ? d + 'd ' : '') + (d || h ? h + 'h ' : '') + m + 'm'; }
  function set(id, text, title) { var e = $(id); if (e.textContent !== String(text)) e.textContent = String(text); if (title !== undefined) e.title = title; }

  // ---- header and figures ----------------------------------------------------------------
  function address() { return data.publicUrl || (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host; }

  function renderFigures() {
    var r = data.relay, w = data.recent;
    document.title = data.name + ' · relay status';
    set('name', data.name);
    set('description', data.description);
    set('address', address());
    set('fig-connections', int(r.connections));
    set('fig-subscriptions', int(r.subscriptions) + ' subscriptions');
    set('fig-events', int(r.events));
    var d = r.disk, free = d && d.freeBytes !== null ? mib(d.freeBytes) + ' free' : '';
    set('fig-bytes', d && d.full ? 'disk full: writes refused · ' + free : mib(r.storeBytes) + ' on disk' + (free ? ' · ' + free : ''),
      d && d.minFreeBytes > 0 ? 'writes are refused below ' + mib(d.minFreeBytes) + ' free (store.minFreeBytes)' : undefined);
    $('fig-bytes').classList.toggle('alert', !!(d && d.full));
    set('fig-stored', int(r.stored), Object.keys(r.storedBySource).map(function (k) { return k + ' ' + r.storedBySource[k]; }).join(', ') || 'none yet');
    set('rate-stored', num(w.rates.stored, '/s') + ' over the last ' + span(w.seconds) + (r.duplicates ? ' · ' + int(r.duplicates) + ' duplicates' : ''));
    set('fig-refused', int(r.refused));
    set('rate-refused', num(w.rates.refused, '/s') + ' · ' + int(r.refusals) + (r.refusals === 1 ? ' refusal' : ' refusals') + ' of any kind');
    set('fig-latency', w.p95.query === null ? '-' : '≤ ' + num(w.p95.query, ' ms'));
    set('rate-latency', w.mean.query === null ? 'no REQ in the last ' + span(w.seconds) : 'mean ' + num(w.mean.query, ' ms') + ' · ' + num(w.rates.reqs, ' REQ/s'));
    set('fig-uptime', uptime(r.uptimeSeconds));
    set('fig-started', 'since ' + utc(data.startedAt));
    set('fig-version', 'orbweaver ' + data.version);
  }

  // ---- charts ------------------------------------------------------------------------------
  function niceCeil(v) { if (!(v > 0)) return 1; var p = Math.pow(10, Math.floor(Math.log10(v))); var m = v / p; return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p; }

  // the last hour, or the time since start when shorter (at least 2 min), so a young relay's charts are not a sliver
  function chartSpan() { return Math.min(3600, Math.max(120, Math.round((data.now - data.startedAt) / 1000))); }

  function chart(id, unit, lines) {
    var box = $(id), s = data.series, W = 600, H = 120, end = data.now / 1000, spanS = chartSpan(), start = end - spanS;
    var max = 0;
    lines.forEach(function (l) { (s[l.key] || []).forEach(function (v) { if (v !== null && v > max) max = v; }); });
    max = niceCeil(max);
    var g = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'none', role: 'img', 'aria-label': box.getAttribute('data-title') });
    [0.5, 1].forEach(function (f) { g.appendChild(svg('line', { x1: 0, x2: W, y1: H - f * (H - 4), y2: H - f * (H - 4), class: 'grid' })); });
    var x = function (t) { return ((t - start) / spanS) * W; };
    var y = function (v) { return H - (v / max) * (H - 4); };
    lines.forEach(function (l, n) {
      var vals = s[l.key] || [], d = '', pen = 'M';
      for (var i = 0; i < vals.length; i++) {
        if (vals[i] === null || s.t[i] < start) { pen = 'M'; continue; }
        d += pen + x(s.t[i]).toFixed(1) + ' ' + y(vals[i]).toFixed(1) + ' ';
        pen = 'L';
      }
      if (n === 0 && d) g.appendChild(svg('path', { d: d + 'L' + x(s.t[s.t.length - 1]).toFixed(1) + ' ' + H + ' L' + x(Math.max(start, s.t[0])).toFixed(1) + ' ' + H + ' Z', class: 'area', fill: l.color }));
      g.appendChild(svg('path', { d: d.trim(), class: 'line' + (l.dash ? ' dash' : ''), stroke: l.color }));
    });
    var cursor = svg('line', { x1: -10, x2: -10, y1: 0, y2: H, class: 'cursor' });
    g.appendChild(cursor);
    var plot = box.querySelector('.plot');
    plot.replaceChildren(g);
    box.querySelector('.ymax').textContent = num(max, unit);
    var axis = box.querySelector('.axis').children;
    axis[0].textContent = span(spanS) + ' ago'; axis[1].textContent = span(spanS / 2) + ' ago';
    var last = s.t.length - 1;
    var legend = box.querySelector('.legend');
    var show = function (i) {
      legend.replaceChildren();
      lines.forEach(function (l) {
        var item = el('span', null, 'key');
        var sw = el('i'); sw.style.background = l.color; item.appendChild(sw);
        item.appendChild(document.createTextNode(l.label + ' ' + (i >= 0 ? num((s[l.key] || [])[i], unit) : '-')));
        legend.appendChild(item);
      });
      if (i >= 0 && i !== last) legend.appendChild(el('span', 'at ' + utc(s.t[i] * 1000, true), 'at'));
    };
    show(last);
    g.addEventListener('mousemove', function (ev) {
      var rect = g.getBoundingClientRect(), t = start + ((ev.clientX - rect.left) / rect.width) * spanS, best = -1, bd = Infinity;
      for (var i = 0; i < s.t.length; i++) { var dd = Math.abs(s.t[i] - t); if (dd < bd) { bd = dd; best = i; } }
      if (best < 0) return;
      cursor.setAttribute('x1', x(s.t[best])); cursor.setAttribute('x2', x(s.t[best]));
      show(best);
    });
    g.addEventListener('mouseleave', function () { cursor.setAttribute('x1', -10); cursor.setAttribute('x2', -10); show(last); });
  }

  function renderCharts() {
    chart('chart-events', '/s', [{ key: 'stored', label: 'stored', color: '#2a9d5c' }, { key: 'refused', label: 'refused', color: '#d1495b' }]);
    chart('chart-connections', '', [{ key: 'connections', label: 'connections', color: '#3b6fd4' }]);
    // the same definition as the card: each point is the minute ending at it (series.latencyWindowSeconds)
    var lws = data.series.latencyWindowSeconds || 60, lw = lws % 60 ? lws + ' s' : lws / 60 + ' min';
    chart('chart-latency', ' ms', [{ key: 'queryMs', label: 'mean, ' + lw, color: '#7b52c7' }, { key: 'queryP95Ms', label: 'p95, ' + lw + ' ≤', color: '#c77b2a', dash: true }]);
    chart('chart-reqs', '/s', [{ key: 'reqs', label: 'REQ', color: '#1f8a9e' }]);
  }

  // ---- refusals, access, sections --------------------------------------------------------------
  function table(head, rows, id) {
    var t = el('table'); if (id) t.id = id;
    if (head) { var th = el('thead'), tr = el('tr'); head.forEach(function (h) { tr.appendChild(el('th', h)); }); th.appendChild(tr); t.appendChild(th); }
    var tb = el('tbody');
    rows.forEach(function (r) { var tr = el('tr'); r.forEach(function (c, i) { tr.appendChild(el(i === 0 ? 'th' : 'td', c)); }); tb.appendChild(tr); });
    t.appendChild(tb);
    return t;
  }

  function renderRefusals() {
    var f = data.refusals, box = $('refusals-box');
    if (!f.total) { box.replaceChildren(el('p', 'No refusals since start.', 'muted')); }
    else {
      var head = ['reason'].concat(f.verbs, ['total']);
      var rows = f.byReason.map(function (r) { return [r.reason].concat(f.verbs.map(function (v) { return r.byVerb[v] || 0; }), [r.total]); });
      var t = table(head, rows, 'refusals');
      var tf = el('tfoot'), tr = el('tr'); tr.appendChild(el('th', 'total'));
      f.verbs.forEach(function (v) { tr.appendChild(el('td', f.byReason.reduce(function (a, r) { return a + (r.byVerb[v] || 0); }, 0))); });
      tr.appendChild(el('td', f.total)); tf.appendChild(tr); t.appendChild(tf);
      box.replaceChildren(t);
    }
    var recent = $('recent-refusals');
    // no client addresses on this public page: how many, and the addresses for the operator (NIP-86 listrefusals)
    var from = f.recentAddresses === 1 ? ', to 1 client address' : f.recentAddresses > 1 ? ', to ' + f.recentAddresses + ' client addresses' : '';
    recent.replaceChildren(el('summary', (f.recent.length === 1 ? 'the latest refusal' : 'the latest ' + f.recent.length + ' refusals') + from));
    if (f.recent.length) recent.appendChild(table(['time (UTC)', 'sent', 'message'], f.recent.slice(0, 20).map(function (x) { return [utc(x.at, true).replace(' UTC', ''), x.verb, x.message]; })));
  }

  function renderAccess() {
    var a = data.access, au = data.auth;
    $('access-box').replaceChildren(table(null, [
      ['NIP-42 challenge', au.challenge === 'connect' ? 'sent on connect' : 'on demand (with the first auth-required: answer)'],
      ['AUTH required', au.required === 'off' ? 'only where a rule asks for it (DMs, NIP-70 protected events)' : au.required === 'all' ? 'to read and write' : 'to ' + au.required],
      ['AUTH challenges sent / succeeded / failed', a.authChallengesSent + ' / ' + a.authSucceeded + ' / ' + a.authFailed],
      ['rate-limited messages', a.rateLimited],
      ['scans cut short (budget / timeout)', a.scansCut],
      ['client IPs connected', a.clientIps],
      ['banned pubkeys', a.bannedPubkeys],
      ['blocked IPs and ranges', a.blockedIps],
    ]));
  }

  function renderSections() {
    var box = $('sections');
    box.replaceChildren.apply(box, data.sections.map(function (s) { var sec = el('section'); sec.appendChild(el('h2', s.title)); sec.appendChild(table(null, s.rows)); return sec; }));
  }

  // ---- the relay directory -------------------------------------------------------------------
  var COLS = [
    { key: 'url', label: 'URL' },
    { key: 'hop', label: 'hop', num: true },
    { key: 'state', label: 'state' },
    { key: 'online', label: 'online' },
    { key: 'lastCrawl', label: 'last crawl', time: true },
    { key: 'fetched', label: 'fetched', num: true },
    { key: 'stored', label: 'stored', num: true },
    { key: 'quirks', label: 'quirks' },
    { key: 'lastError', label: 'last error' },
    { key: 'nextAttempt', label: 'next attempt', time: true },
  ];
  var MAX_ROWS = 1000;

  function cmp(a, b) {
    var va = a[sort.key], vb = b[sort.key];
    if (Array.isArray(va)) { va = va.join(', '); vb = vb.join(', '); }
    if (va === null || va === undefined || va === '') return vb === null || vb === undefined || vb === '' ? 0 : 1;
    if (vb === null || vb === undefined || vb === '') return -1;
    var c = typeof va === 'number' ? va - vb : String(va) < String(vb) ? -1 : String(va) > String(vb) ? 1 : 0;
    return c * sort.dir || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
  }

  function matches(r, q) {
    if (stateFilter && r.state !== stateFilter) return false;
    if (!q) return true;
    return [r.url, r.state, r.quirks.join(' '), r.lastError || '', 'hop ' + r.hop].join(' ').toLowerCase().indexOf(q) >= 0;
  }

  function renderDirectory() {
    var box = $('directory-box');
    if (!directory) { box.hidden = true; return; }
    box.hidden = false;
    // an empty directory is a sentence, not a table of headers: with the spider off, how to turn it on
    var empty = directory.total === 0;
    $('dir-hint').hidden = !empty;
    $('dir-toolbar').hidden = empty;
    $('dir-scroll').hidden = empty;
    if (empty) { set('dir-hint', data.directoryHint || 'No relay in the directory yet: the spider has not found any.'); return; }
    var chips = $('dir-states');
    chips.replaceChildren();
    var all = el('button', 'all ' + directory.total, stateFilter === '' ? 'chip on' : 'chip'); all.setAttribute('data-state', '');
    chips.appendChild(all);
    Object.keys(directory.byState).forEach(function (s) {
      if (!directory.byState[s]) return;
      var b = el('button', s + ' ' + directory.byState[s], 'chip st-' + s + (stateFilter === s ? ' on' : '')); b.setAttribute('data-state', s);
      chips.appendChild(b);
    });
    var head = $('directory').querySelector('thead tr');
    head.replaceChildren.apply(head, COLS.map(function (c) {
      var th = el('th', c.label + (sort.key === c.key ? (sort.dir > 0 ? ' ▲' : ' ▼') : ''), c.num ? 'num' : '');
      th.setAttribute('data-key', c.key); th.title = 'sort by ' + c.label;
      return th;
    }));
    var q = $('dir-filter').value.trim().toLowerCase();
    var rows = directory.rows.filter(function (r) { return matches(r, q); }).sort(cmp);
    var body = $('directory').querySelector('tbody');
    body.replaceChildren.apply(body, rows.slice(0, MAX_ROWS).map(function (r) {
      var tr = el('tr', null, 'st-' + r.state);
      COLS.forEach(function (c) {
        var v = r[c.key], td;
        if (c.time) { td = el('td', utc(v)); td.title = relative(v); }
        else if (c.key === 'quirks') td = el('td', v.join(', '));
        else if (c.key === 'state') { td = el('td'); td.appendChild(el('span', v, 'pill st-' + v)); if (r.failures > 1) td.title = r.failures + ' failures in a row'; }
        else if (c.key === 'url') {
          // each relay links to its detail on /directory (uptime, round-trip times, NIP-66)
          td = el('td', null, 'url'); var a = el('a', v); a.href = '/directory#relay=' + encodeURIComponent(v); td.appendChild(a);
          if (r.name) td.title = r.name + (r.software ? ' (' + r.software + ')' : '');
        }
        else if (c.key === 'lastError') { td = el('td', v || '', 'err'); if (v) td.title = v; }
        else if (c.key === 'hop' && v < 0) { td = el('td', 'found', 'num'); td.title = 'not on the spider\'s hops: found in stored events and validated by the monitor'; }
        else if (c.key === 'online') { td = el('td', v === null || v === undefined ? '-' : v ? 'yes' : 'no'); if (r.uptimeWeek !== null && r.uptimeWeek !== undefined) td.title = 'uptime over 7 days: ' + (r.uptimeWeek * 100).toFixed(1) + '%'; }
        else td = el('td', c.num ? int(v) : v, c.num ? 'num' : '');
        tr.appendChild(td);
      });
      return tr;
    }));
    set('dir-count', rows.length === directory.total ? directory.total + ' relays' : rows.length + ' of ' + directory.total + ' relays' + (rows.length > MAX_ROWS ? ' (first ' + MAX_ROWS + ' shown)' : ''));
    set('dir-generated', 'as of ' + utc(directory.generatedAt, true));
  }

  $('directory').querySelector('thead').addEventListener('click', function (ev) {
    var th = ev.target.closest('th'); if (!th) return;
    var key = th.getAttribute('data-key');
    sort = sort.key === key ? { key: key, dir: -sort.dir } : { key: key, dir: 1 };
    renderDirectory();
  });
  $('dir-states').addEventListener('click', function (ev) {
    var b = ev.target.closest('button'); if (!b) return;
    stateFilter = b.getAttribute('data-state') || '';
    renderDirectory();
  });
  $('dir-filter').addEventListener('input', renderDirectory);
  $('copy-address').addEventListener('click', function () {
    var text = address(), btn = $('copy-address');
    var done = function () { btn.textContent = 'copied'; setTimeout(function () { btn.textContent = 'copy'; }, 1500); };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, function () {});
    else { var r = document.createRange(); r.selectNodeContents($('address')); var s = getSelection(); s.removeAllRanges(); s.addRange(r); try { document.execCommand('copy'); done(); } catch (e) { /* selected: copy by hand */ } }
  });

  // ---- refresh ---------------------------------------------------------------------------------
  function render() {
    renderFigures();
    renderCharts();
    renderRefusals();
    renderAccess();
    renderSections();
    renderDirectory();
    set('updated', 'updated ' + utc(data.now, true));
    document.body.classList.remove('stale');
    document.body.setAttribute('data-updated', String(data.now));
  }

  function loadDirectory() {
    if (dirLoading) return;
    dirLoading = true;
    fetch('/status.json', { cache: 'no-store' })
      .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.json(); })
      .then(function (d) { directory = d.directory || null; dirStamp = d.directoryStamp; renderDirectory(); })
      .catch(function () { /* the next tick tries again */ })
      .then(function () { dirLoading = false; });
  }

  function tick() {
    fetch('/status.json?directory=0', { cache: 'no-store' })
      .then(function (r) { if (!r.ok) throw new Error('HTTP ' + r.status); return r.json(); })
      .then(function (d) {
        failures = 0; lastOk = d.now; data = d;
        render();
        if (d.directoryStamp !== dirStamp) loadDirectory();
      })
      .catch(function () {
        failures++;
        document.body.classList.add('stale');
        set('updated', 'relay not answering since ' + utc(lastOk, true) + ' (' + failures + ' tries)');
      })
      .then(function () { setTimeout(tick, REFRESH_MS); });
  }

  render();
  setTimeout(tick, REFRESH_MS);
})();
`;
