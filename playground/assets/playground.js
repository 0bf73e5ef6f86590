// Boots GraphiQL (project-owned). Reads its settings from the JSON element
// #playground-config written by playground.Handler:
//   {"endpoint": string, "query": string?, "headers": string? (a JSON object
//    as text), "variables": string?, "subscription": string?,
//    "subscriptionVariables": string? (the subscription tab's; else
//    variables), "upstreamTrace": bool?}
// Requests are POSTed to endpoint as JSON with the headers from the headers
// editor; Content-Type is always application/json (the server refuses simple
// content types as a CSRF measure). A subscription runs over a WebSocket to
// endpoint with the graphql-transport-ws protocol (a small client below, no
// library): the headers editor's headers (Authorization, service-network-id,
// X-Upstream-Trace) go in connection_init's payload; the result pane lists
// the events received, newest first (eventLog).
//
// Requests accept incremental delivery (multipart/mixed; deferSpec=20220824):
// a query with @defer is answered in parts, which the fetcher yields as they
// come and GraphiQL merges into the result pane.
//
// With upstreamTrace, every request also carries X-Upstream-Trace: 1 (unless
// the headers editor sets that header itself), and the "Upstream calls"
// plugin, open by default, draws the extensions.upstream report of the last
// response as a waterfall: one row per REST call with its route, status,
// duration and markers (cached, shared, batch, retries, rate-limit waits,
// and, for a response in parts, the part each call served: "initial" or the
// deferred part's label). For a subscription's event the report starts with
// the calls of the poll that saw the change (part "poll"), then the loads of
// the event's links.
//
// A query marked @live (docs/live-data.md) runs over the same WebSocket: the
// result pane shows the current result (the first one, then each update's
// JSON Patch applied to it, with its revision), and the panel lists the
// query's runs by revision, newest first: each with the polls that saw the
// change (extensions.live.polls) and the re-run's calls
// (extensions.upstream). A run's part is named by its revision, a number the
// server assigns (data-upstream-revision), never by a string of the
// document, so no @defer label (data-upstream-part) can take its name.
(function () {
  'use strict';

  var cfg = JSON.parse(document.getElementById('playground-config').textContent);
  var h = React.createElement;
  var TRACE_HEADER = 'X-Upstream-Trace';
  var PANEL_TITLE = 'Upstream calls';

  function errorResult(message) {
    return { errors: [{ message: message }] };
  }

  // lastReport holds what the panel shows: null before the first operation,
  // else {seq (1 for the first response), operation, report
  // (extensions.upstream or null)}. Listeners are the mounted panels.
  var lastReport = null;
  var listeners = [];
  var seq = 0;

  function publish(operation, result) {
    var ext = result && result.extensions;
    seq++;
    lastReport = { seq: seq, operation: operation, report: (ext && ext.upstream) || null };
    listeners.slice().forEach(function (fn) { fn(lastReport); });
  }

  // LIVE_RUNS_KEPT is how many runs of a live query the panel lists.
  var LIVE_RUNS_KEPT = 20;

  // publishLive shows the runs of a live query: runs is its list, oldest
  // first, to which result (one of its results) adds a run {revision, polls
  // (extensions.live.polls), report (extensions.upstream or null)}.
  function publishLive(operation, runs, result) {
    var ext = (result && result.extensions) || {};
    runs.push({ revision: result.revision, polls: (ext.live && ext.live.polls) || [], report: ext.upstream || null });
    if (runs.length > LIVE_RUNS_KEPT) { runs.shift(); }
    seq++;
    lastReport = { seq: seq, operation: operation, report: ext.upstream || null, live: runs.slice() };
    listeners.slice().forEach(function (fn) { fn(lastReport); });
  }

  // operation returns the type ("query", "mutation", "subscription", or
  // "live" for a query marked @live) of
  // the operation GraphiQL runs: the named one, else the document's only
  // one. GraphiQL 3.9 may still send the name of the previous tab's
  // operation right after a tab switch: a name the document does not have,
  // with one operation in it, is dropped (params.operationName is fixed).
  function operation(params) {
    var doc = ((params && params.query) || '').replace(/#[^\n]*/g, '').replace(/"""[\s\S]*?"""|"(?:[^"\\]|\\.)*"/g, '""');
    var ops = [];
    var re = /(?:^|[}\s])(query|mutation|subscription)\b\s*([_A-Za-z][_0-9A-Za-z]*)?([^{]*)/g;
    var m;
    while ((m = re.exec(doc)) !== null) {
      ops.push({ type: m[1], name: m[2] || '', header: m[3] || '' });
    }
    if (ops.length === 0 && /^\s*\{/.test(doc)) {
      ops.push({ type: 'query', name: '', header: '' });
    }
    var name = params && params.operationName;
    for (var i = 0; i < ops.length; i++) {
      if (name && ops[i].name === name) {
        return kind(ops[i]);
      }
    }
    if (ops.length === 1) {
      if (name) {
        params.operationName = ops[0].name || undefined;
      }
      return kind(ops[0]);
    }
    return '';
  }

  // kind is an operation's type, "live" for a query whose header (its
  // variables and directives) has @live, unless @live(if: false).
  function kind(op) {
    if (op.type === 'query' && /@live\b/.test(op.header) && !/@live\s*\(\s*if\s*:\s*false\s*\)/.test(op.header)) {
      return 'live';
    }
    return op.type;
  }

  // EVENTS_KEPT is how many events of a subscription the result pane lists.
  var EVENTS_KEPT = 50;

  function clock(d) {
    function two(n) { return (n < 10 ? '0' : '') + n; }
    return two(d.getHours()) + ':' + two(d.getMinutes()) + ':' + two(d.getSeconds());
  }

  // eventLog keeps a subscription's events for the result pane, newest
  // first, each numbered and timed (its extensions.upstream left to the
  // Upstream calls panel), so each event does not replace the last: view()
  // is what GraphiQL shows, {eventsReceived, events: [{n, receivedAt, data,
  // errors, extensions}]} and, beyond EVENTS_KEPT, how many are listed.
  function eventLog() {
    var events = [];
    var received = 0;
    return {
      add: function (result) {
        received++;
        var e = { n: received, receivedAt: clock(new Date()) };
        if (result && 'data' in result) { e.data = result.data; }
        if (result && result.errors) { e.errors = result.errors; }
        var ext = {};
        Object.keys((result && result.extensions) || {}).forEach(function (k) {
          if (k !== 'upstream') { ext[k] = result.extensions[k]; }
        });
        if (Object.keys(ext).length) { e.extensions = ext; }
        events.unshift(e);
        if (events.length > EVENTS_KEPT) { events.pop(); }
      },
      view: function (note) {
        var v = { eventsReceived: received };
        if (note) { v.status = note; }
        if (received > events.length) { v.listed = 'the newest ' + events.length; }
        v.events = events.slice();
        return v;
      }
    };
  }

  // applyPatch applies a JSON Patch (RFC 6902: add, remove, replace, the
  // operations the server sends) to a copy of doc and returns it.
  function applyPatch(doc, patch) {
    var root = { v: JSON.parse(JSON.stringify(doc === undefined ? null : doc)) };
    patch.forEach(function (op) {
      var keys = op.path === '' ? [] : op.path.slice(1).split('/').map(function (k) {
        return k.replace(/~1/g, '/').replace(/~0/g, '~');
      });
      var parent = root;
      var key = 'v';
      keys.forEach(function (k) {
        parent = parent[key];
        if (parent === null || typeof parent !== 'object') { throw new Error('no ' + op.path + ' to patch'); }
        key = Array.isArray(parent) && k === '-' ? parent.length : k;
      });
      if (Array.isArray(parent) && key !== 'v') {
        var i = Number(key);
        if (op.op === 'add') { parent.splice(i, 0, op.value); return; }
        if (op.op === 'remove') { parent.splice(i, 1); return; }
      }
      if (op.op === 'add' || op.op === 'replace') { parent[key] = op.value; return; }
      if (op.op === 'remove') { delete parent[key]; return; }
      throw new Error('unsupported patch operation ' + op.op);
    });
    return root.v;
  }

  // liveResult keeps a live query's current result for the result pane:
  // add takes each result as sent (the first whole, with revision 1, then
  // {patch, revision}) and view() is what GraphiQL shows: {revision,
  // liveQuery: {status, updatesReceived, lastPatch}, data, errors,
  // extensions (but upstream: the panel's)}. A revision out of sequence
  // (or a patch that does not apply) shows as an error: the data may be
  // stale.
  function liveResult() {
    var data = null;
    var revision = 0;
    var updates = 0;
    var errors;
    var extensions;
    var lastPatch;
    var broken;
    return {
      add: function (r) {
        errors = r.errors;
        var ext = {};
        Object.keys(r.extensions || {}).forEach(function (k) {
          if (k !== 'upstream') { ext[k] = r.extensions[k]; }
        });
        if (ext.live && ext.live.polls) {
          ext.live = Object.assign({}, ext.live);
          delete ext.live.polls; // drawn in the panel
          if (!Object.keys(ext.live).length) { delete ext.live; }
        }
        if ('patch' in r) {
          updates++;
          lastPatch = r.patch;
          if (r.revision !== revision + 1) {
            broken = 'revision ' + r.revision + ' after ' + revision + ': an update was missed, the data may be stale';
          } else {
            try { data = applyPatch(data, r.patch || []); } catch (e) { broken = 'the patch of revision ' + r.revision + ' did not apply: ' + e.message; }
          }
          extensions = Object.assign({}, extensions, ext);
        } else if ('data' in r) {
          data = r.data;
          extensions = ext;
        }
        revision = r.revision || revision;
      },
      view: function (note) {
        var v = { revision: revision, liveQuery: { status: note || 'live: each change upstream patches this result', updatesReceived: updates } };
        if (lastPatch) { v.liveQuery.lastPatch = lastPatch; }
        v.data = data;
        if (errors || broken) { v.errors = (errors || []).concat(broken ? [{ message: broken }] : []); }
        if (extensions && Object.keys(extensions).length) { v.extensions = extensions; }
        return v;
      }
    };
  }

  // subscribe runs a subscription over graphql-transport-ws: an observable
  // GraphiQL shows until the stream completes or the user stops it. The pane
  // shows the event log (eventLog), newest first, and a status line while
  // waiting for the first event and once the stream has ended.
  // With live, the operation is a query marked @live: the pane shows its
  // current result (liveResult) and the panel its runs (publishLive).
  function subscribe(params, headers, live) {
    return {
      subscribe: function (observer) {
        var url = new URL(cfg.endpoint, window.location.href);
        url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
        var ws = new WebSocket(url.toString(), 'graphql-transport-ws');
        var log = live ? liveResult() : eventLog();
        var runs = [];
        var done = false;
        function finish(note) {
          if (!done) {
            done = true;
            observer.next(log.view(note || 'ended'));
            observer.complete();
          }
        }
        function send(m) { ws.send(JSON.stringify(m)); }
        ws.onopen = function () {
          var payload = {};
          headers.forEach(function (v, k) { payload[k] = v; });
          send({ type: 'connection_init', payload: payload });
        };
        ws.onmessage = function (ev) {
          var m = JSON.parse(ev.data);
          switch (m.type) {
            case 'connection_ack':
              send({ id: '1', type: 'subscribe', payload: { query: params.query, variables: params.variables, operationName: params.operationName } });
              observer.next(log.view(live ? 'live: waiting for the first result' : 'subscribed: each change arrives as an event, newest first (a subscription sees changes, not the current state)'));
              break;
            case 'ping':
              send({ type: 'pong' });
              break;
            case 'next':
              if (live) {
                publishLive(params.operationName || '', runs, m.payload);
              } else {
                publish(params.operationName || '', m.payload);
              }
              log.add(m.payload);
              observer.next(log.view());
              break;
            case 'error':
              log.add({ errors: m.payload });
              finish('refused');
              break;
            case 'complete':
              finish('completed');
              break;
          }
        };
        ws.onclose = function (ev) {
          if (!done && ev.code !== 1000) {
            log.add(errorResult('the WebSocket closed: ' + ev.code + ' ' + (ev.reason || '(refused: check the Origin and the credentials)')));
          }
          finish('closed');
        };
        return {
          unsubscribe: function () {
            if (ws.readyState === WebSocket.OPEN) {
              send({ id: '1', type: 'complete' });
              ws.close(1000);
            }
            done = true;
          }
        };
      }
    };
  }

  function fetcher(params, opts) {
    var headers;
    try {
      headers = new Headers((opts && opts.headers) || {});
    } catch (e) {
      return Promise.resolve(errorResult('invalid request headers: ' + e.message));
    }
    headers.set('Content-Type', 'application/json');
    headers.set('Accept', 'multipart/mixed; deferSpec=20220824, application/json');
    if (cfg.upstreamTrace && !headers.has(TRACE_HEADER)) {
      headers.set(TRACE_HEADER, '1');
    }
    var type = operation(params);
    if (type === 'subscription' || type === 'live') {
      headers.delete('Content-Type');
      headers.delete('Accept');
      return subscribe(params, headers, type === 'live');
    }
    // GraphiQL's own schema fetch is not the user's operation.
    var introspection = params && params.operationName === 'IntrospectionQuery';
    return fetch(cfg.endpoint, {
      method: 'POST',
      headers: headers,
      body: JSON.stringify(params),
      credentials: 'same-origin'
    }).then(function (res) {
      var type = res.headers.get('Content-Type') || '';
      if (type.indexOf('multipart/mixed') === 0 && res.body) {
        return payloads(res, type, function (last) {
          if (!introspection) {
            publish((params && params.operationName) || '', last);
          }
        });
      }
      return res.text().then(function (text) {
        var result;
        try {
          result = JSON.parse(text);
        } catch (e) {
          result = errorResult('HTTP ' + res.status + ' (not JSON): ' + text.slice(0, 500));
        }
        if (!introspection) {
          publish((params && params.operationName) || '', result);
        }
        return result;
      });
    }, function (err) {
      var result = errorResult('request failed: ' + err.message);
      if (!introspection) {
        publish((params && params.operationName) || '', result);
      }
      return result;
    });
  }

  // payloads returns the parts of a multipart/mixed response as an async
  // iterable of payloads (GraphiQL merges them), calling done with the last
  // one (hasNext false: it carries the call report).
  function payloads(res, type, done) {
    var m = /boundary="?([^";]+)"?/.exec(type);
    var delimiter = '\r\n--' + (m ? m[1] : '-');
    var reader = res.body.getReader();
    var decoder = new TextDecoder();
    var buffer = '';
    var queue = [];
    var finished = false;
    function take() {
      var end;
      while ((end = buffer.indexOf(delimiter)) >= 0) {
        var part = buffer.slice(0, end);
        buffer = buffer.slice(end + delimiter.length);
        var body = part.indexOf('\r\n\r\n') >= 0 ? part.slice(part.indexOf('\r\n\r\n') + 4) : '';
        if (body.trim() === '') {
          continue;
        }
        var payload;
        try {
          payload = JSON.parse(body);
        } catch (e) {
          payload = errorResult('a part that is not JSON: ' + body.slice(0, 200));
          payload.hasNext = false;
        }
        if (payload.hasNext === false) {
          done(payload);
        }
        queue.push(payload);
      }
    }
    var iterator = {
      next: function () {
        if (queue.length) {
          return Promise.resolve({ value: queue.shift(), done: false });
        }
        if (finished) {
          return Promise.resolve({ value: undefined, done: true });
        }
        return reader.read().then(function (r) {
          if (r.done) {
            finished = true;
          } else {
            buffer += decoder.decode(r.value, { stream: true });
            take();
          }
          return iterator.next();
        });
      },
      'return': function () {
        finished = true;
        reader.cancel();
        return Promise.resolve({ value: undefined, done: true });
      }
    };
    iterator[Symbol.asyncIterator] = function () { return iterator; };
    return iterator;
  }

  // hasSavedTabs reports whether GraphiQL restored tabs from a previous visit.
  function hasSavedTabs() {
    try {
      return !!window.localStorage.getItem('graphiql:tabState');
    } catch (e) {
      return false;
    }
  }

  function fmtMs(ms) {
    if (typeof ms !== 'number') {
      return '';
    }
    return (ms >= 100 ? Math.round(ms) : Math.round(ms * 10) / 10) + ' ms';
  }

  // markers lists the short labels of what is special about a call.
  function markers(c) {
    var m = [];
    if (c.cached) { m.push('cached'); }
    if (c.shared) { m.push('shared'); }
    if (c.batch) { m.push('batch of ' + c.batch); }
    if (c.retries) { m.push('retries ' + c.retries); }
    if (c.rateLimited) { m.push('429 \u00d7' + c.rateLimited); }
    if (c.waitedMs >= 0.05) { m.push('waited ' + fmtMs(c.waitedMs) + ' for the rate budget'); }
    if (c.part) { m.push('part: ' + c.part); }
    return m;
  }

  // summary says how many calls the waterfall draws and what became of
  // them: report.count went to the REST API (of them, those shared with an
  // identical call in flight), report.cacheHits the response cache answered
  // (no request). "5 calls to the REST API"; "3 calls: 2 to the REST API,
  // 1 answered by the response cache".
  function summary(rep) {
    var calls = rep.calls || [];
    var hits = rep.cacheHits || 0;
    var total = rep.count + hits;
    var shared = calls.filter(function (c) { return c.shared; }).length;
    var sharedNote = shared ? ' (' + shared + ' shared with an identical call in flight)' : '';
    var head = total + (total === 1 ? ' call' : ' calls');
    if (!hits) {
      return head + ' to the REST API' + sharedNote;
    }
    return head + ': ' + rep.count + ' to the REST API' + sharedNote + ', ' + hits + ' answered by the response cache';
  }

  // byRoute counts the calls per "METHOD /route", most first.
  function byRoute(calls) {
    var counts = {};
    calls.forEach(function (c) {
      var k = c.method + ' ' + c.path;
      counts[k] = (counts[k] || 0) + 1;
    });
    return Object.keys(counts).sort(function (a, b) {
      return counts[b] - counts[a] || (a < b ? -1 : 1);
    }).map(function (k) { return { route: k, n: counts[k] }; });
  }

  // byPart counts the calls per part of a response delivered in parts, in
  // the order the parts' first calls started; empty otherwise.
  function byPart(calls) {
    var counts = {};
    var order = [];
    calls.forEach(function (c) {
      if (!c.part) { return; }
      if (!(c.part in counts)) { counts[c.part] = 0; order.push(c.part); }
      counts[c.part]++;
    });
    return order.map(function (p) { return { part: p, n: counts[p] }; });
  }

  // Waterfall draws report; within a live query's run (props.revision) its
  // rows carry the run's revision and props.title names the report (the
  // polls, the re-run).
  function Waterfall(props) {
    var rep = props.report;
    var calls = (rep.calls || []).slice().sort(function (a, b) {
      return (a.startMs || 0) - (b.startMs || 0);
    });
    var end = 0;
    calls.forEach(function (c) { end = Math.max(end, (c.startMs || 0) + (c.durationMs || 0)); });
    var scale = end > 0 ? 100 / end : 0;
    return h('div', { className: 'upstream-waterfall' },
      h('p', { className: 'upstream-summary', 'data-upstream-count': rep.count, 'data-upstream-cache-hits': rep.cacheHits || 0 },
        props.title ? h('span', { className: 'upstream-report-title' }, props.title + ': ') : null,
        summary(rep), end > 0 ? h('span', { className: 'upstream-span' }, ' in ' + fmtMs(end)) : null),
      !props.revision && byPart(calls).length ? h('ul', { className: 'upstream-parts' }, byPart(calls).map(function (p) {
        return h('li', { key: p.part, 'data-upstream-part': p.part, 'data-calls': p.n }, 'part ', h('strong', null, p.part), ': ' + p.n + (p.n === 1 ? ' call' : ' calls'));
      })) : null,
      h('ul', { className: 'upstream-routes' }, byRoute(calls).map(function (r) {
        return h('li', { key: r.route }, h('code', null, r.route), ' \u00d7' + r.n);
      })),
      h('ol', { className: 'upstream-calls' }, calls.map(function (c, i) {
        var failed = !(c.status >= 200 && c.status < 400);
        var left = (c.startMs || 0) * scale;
        var width = Math.max((c.durationMs || 0) * scale, 0.5);
        return h('li', {
          key: i,
          className: 'upstream-call' + (failed ? ' upstream-failed' : '') + (c.cached ? ' upstream-cached' : '') + (c.part === 'poll' ? ' upstream-poll' : c.part && c.part !== 'initial' ? ' upstream-deferred' : ''),
          'data-part': c.part || '',
          'data-revision': props.revision || undefined,
          'data-upstream-call': c.method + ' ' + c.path,
          'data-status': c.status,
          'data-cached': c.cached ? 'true' : 'false',
          'data-shared': c.shared ? 'true' : 'false',
          'data-batch': c.batch || 0,
          title: c.method + ' ' + c.path + ': ' + (c.status || 'no answer') + ', started at ' + fmtMs(c.startMs) + ', took ' + fmtMs(c.durationMs)
        },
        h('div', { className: 'upstream-call-head' },
          h('code', { className: 'upstream-route' }, c.method + ' ' + c.path),
          h('span', { className: 'upstream-meta' },
            h('span', { className: 'upstream-status' }, c.status ? String(c.status) : '\u2014'),
            h('span', { className: 'upstream-duration' }, fmtMs(c.durationMs)))),
        h('div', { className: 'upstream-track' },
          h('div', { className: 'upstream-bar', style: { left: left + '%', width: width + '%' } },
            // The part spent waiting for the rate budget, lighter.
            c.waitedMs > 0 && c.durationMs > 0 ? h('div', { className: 'upstream-bar-wait', style: { width: Math.min(100, 100 * c.waitedMs / c.durationMs) + '%' } }) : null)),
        markers(c).length ? h('div', { className: 'upstream-markers' }, markers(c).map(function (m) {
          return h('span', { key: m, className: 'upstream-marker' }, m);
        })) : null);
      })));
  }

  // LiveRuns lists a live query's runs, newest first, each a part named by
  // its revision: the polls that saw the change, then the re-run's calls.
  function LiveRuns(props) {
    return h('ol', { className: 'upstream-revisions' }, props.runs.slice().reverse().map(function (run) {
      var polls = run.polls || [];
      var what = run.revision === 1 ? 'the first run' :
        'the re-run after ' + (polls.length === 1 ? 'a poll' : polls.length + ' polls') + ' saw a change';
      return h('li', {
        key: run.revision,
        className: 'upstream-revision',
        'data-upstream-revision': run.revision,
        'data-polls': polls.length,
        'data-calls': run.report ? run.report.count : 0,
        'data-cache-hits': run.report ? run.report.cacheHits || 0 : 0
      },
      h('p', { className: 'upstream-revision-title' }, h('strong', null, 'revision ' + run.revision), ': ' + what),
      polls.length ? h(Waterfall, { report: { count: polls.length, calls: polls }, revision: run.revision, title: 'polls' }) : null,
      run.report ? h(Waterfall, { report: run.report, revision: run.revision, title: run.revision === 1 ? 'run' : 're-run' }) :
        h('p', { className: 'upstream-empty' }, 'no call report'));
    }));
  }

  function UpstreamCallsPanel() {
    var state = React.useState(lastReport);
    var current = state[0];
    var set = state[1];
    React.useEffect(function () {
      listeners.push(set);
      set(lastReport);
      return function () {
        var i = listeners.indexOf(set);
        if (i >= 0) { listeners.splice(i, 1); }
      };
    }, []);
    var body;
    if (!current) {
      body = h('p', { className: 'upstream-empty' }, 'Run an operation: the REST calls the facade makes for it appear here, each with its route, status and duration.');
    } else if (current.live) {
      body = h(LiveRuns, { runs: current.live });
    } else if (!current.report) {
      body = h('p', { className: 'upstream-empty' }, 'The last response has no upstream call report (the server sends it only when ' + TRACE_HEADER + ' is 1 and the report is enabled).');
    } else {
      body = h(Waterfall, { report: current.report });
    }
    return h('section', { className: 'upstream-panel', 'data-testid': 'upstream-calls', 'data-seq': current ? current.seq : 0 },
      h('div', { className: 'graphiql-doc-explorer-title' }, PANEL_TITLE),
      current && current.operation ? h('p', { className: 'upstream-operation' }, 'Last operation: ', h('code', null, current.operation),
        current.live && current.live.length ? ' (live, revision ' + current.live[current.live.length - 1].revision + ')' : null) : null,
      body);
  }

  function UpstreamCallsIcon() {
    // Three staggered bars: a waterfall.
    return h('svg', { viewBox: '0 0 24 24', width: '1em', height: '1em', fill: 'none', stroke: 'currentColor', strokeWidth: 1.5, 'aria-hidden': 'true' },
      h('path', { d: 'M3 5h8M7 12h9M12 19h9', strokeLinecap: 'round', strokeWidth: 3 }));
  }

  var props = {
    fetcher: fetcher,
    shouldPersistHeaders: false,
    isHeadersEditorEnabled: true,
    defaultEditorToolsVisibility: 'headers'
  };
  if (typeof cfg.query === 'string') {
    props.defaultQuery = cfg.query;
  }
  if (typeof cfg.headers === 'string') {
    props.defaultHeaders = cfg.headers;
  }
  if (typeof cfg.variables === 'string' && !hasSavedTabs()) {
    // GraphiQL has no defaultVariables. A first tab carries them, like
    // defaultQuery only when the browser has no saved tabs; GraphiQL 3.9
    // fills the variables editor from the variables prop, not from that tab,
    // so both are set (else the prefilled query runs without its variables).
    props.defaultTabs = [{query: cfg.query || '', variables: cfg.variables, headers: cfg.headers}];
    if (typeof cfg.subscription === 'string') {
      props.defaultTabs.push({query: cfg.subscription, variables: cfg.subscriptionVariables || cfg.variables, headers: cfg.headers});
    }
    props.variables = cfg.variables;
  }
  if (cfg.upstreamTrace) {
    var plugin = { title: PANEL_TITLE, icon: UpstreamCallsIcon, content: UpstreamCallsPanel };
    // GraphiQL's own plugins (docs, history) come first; ours is open.
    props.plugins = [plugin];
    props.visiblePlugin = plugin;
  }

  var root = ReactDOM.createRoot(document.getElementById('graphiql'));
  root.render(React.createElement(GraphiQL, props));
})();
