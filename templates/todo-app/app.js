// app.js: the todo list: add, toggle, delete, filter, clear completed; kept in localStorage, or on the server
// for the signed-in person through the site's backend (/_svc/client.js, the "todos" collection of svc.data.json).
(function () {
  "use strict";

  var STORAGE_KEY = "svc-todo-app:v1";
  var FILTER_KEY = "svc-todo-app:filter";
  var FILTERS = ["all", "active", "completed"];
  var MAX_TITLE = 200;

  var form = document.getElementById("new-todo-form");
  var input = document.getElementById("new-todo");
  var list = document.getElementById("todo-list");
  var emptyState = document.getElementById("empty-state");
  var toolbar = document.getElementById("toolbar");
  var count = document.getElementById("todo-count");
  var clearButton = document.getElementById("clear-completed");
  var filterButtons = Array.prototype.slice.call(document.querySelectorAll("[data-filter]"));

  var tagline = document.getElementById("tagline");
  var account = document.getElementById("account");
  var signIn = document.getElementById("sign-in");
  var signInForm = document.getElementById("sign-in-form");
  var accountError = document.getElementById("account-error");
  var signedIn = document.getElementById("signed-in");
  var accountEmail = document.getElementById("account-email");
  var signOutButton = document.getElementById("sign-out");

  var LOCAL_TAGLINE = tagline.textContent;
  var todos = load();
  var filter = loadFilter();
  var client = null; // the backend's client once /_svc/client.js loaded
  var user = null; // the signed-in person: their todos are the server's, not this browser's
  var queue = Promise.resolve(); // server calls, one after another, in the order of the changes
  var serverIds = {}; // the id the server gave an item added before its create answered
  var loading = false; // the server's list is on its way: no change until it is here

  // ---- storage ----

  function load() {
    try {
      var raw = window.localStorage.getItem(STORAGE_KEY);
      var parsed = raw ? JSON.parse(raw) : [];
      if (!Array.isArray(parsed)) return [];
      return parsed
        .filter(function (t) {
          return t && typeof t.id === "string" && typeof t.title === "string";
        })
        .map(function (t) {
          return { id: t.id, title: t.title.slice(0, MAX_TITLE), completed: t.completed === true };
        });
    } catch (e) {
      return []; // storage disabled or corrupt: start empty rather than fail
    }
  }

  function save() {
    if (user) return; // a signed-in person's todos are on the server
    try {
      window.localStorage.setItem(STORAGE_KEY, JSON.stringify(todos));
    } catch (e) {
      // private mode or full storage: the list still works for this visit
    }
  }

  function loadFilter() {
    var fromHash = window.location.hash.replace(/^#\/?/, "");
    if (FILTERS.indexOf(fromHash) >= 0) return fromHash;
    try {
      var stored = window.localStorage.getItem(FILTER_KEY);
      if (FILTERS.indexOf(stored) >= 0) return stored;
    } catch (e) {
      // ignore
    }
    return "all";
  }

  function newId() {
    if (window.crypto && typeof window.crypto.randomUUID === "function") return window.crypto.randomUUID();
    return Date.now().toString(36) + Math.random().toString(36).slice(2);
  }

  // ---- changes ----

  function addTodo(title) {
    var clean = title.replace(/\s+/g, " ").trim().slice(0, MAX_TITLE);
    if (!clean || loading) return false;
    var todo = { id: newId(), title: clean, completed: false };
    todos.push(todo);
    save();
    render();
    remote(function (c) {
      return c.create({ title: todo.title, completed: false }).then(function (r) {
        serverIds[todo.id] = r.id;
      });
    });
    return true;
  }

  function toggleTodo(id) {
    var completed = false;
    todos.forEach(function (t) {
      if (t.id === id) completed = t.completed = !t.completed;
    });
    save();
    render();
    remote(function (c) {
      return c.update(serverId(id), { completed: completed });
    });
  }

  function deleteTodo(id) {
    var index = indexOf(id);
    if (index < 0) return;
    todos.splice(index, 1);
    save();
    render();
    focusAfterRemoval(index);
    remote(function (c) {
      return c.delete(serverId(id));
    });
  }

  function clearCompleted() {
    var gone = todos.filter(function (t) {
      return t.completed;
    });
    todos = todos.filter(function (t) {
      return !t.completed;
    });
    gone.forEach(function (t) {
      remote(function (c) {
        return c.delete(serverId(t.id));
      });
    });
    save();
    render();
    input.focus();
  }

  function setFilter(name) {
    if (FILTERS.indexOf(name) < 0) return;
    filter = name;
    try {
      window.localStorage.setItem(FILTER_KEY, name);
    } catch (e) {
      // ignore
    }
    if (window.history && window.history.replaceState) {
      window.history.replaceState(null, "", name === "all" ? window.location.pathname : "#/" + name);
    }
    render();
  }

  function indexOf(id) {
    for (var i = 0; i < todos.length; i++) if (todos[i].id === id) return i;
    return -1;
  }

  // After a delete, keep the keyboard user in the list: the next item, else the previous, else the input.
  function focusAfterRemoval(index) {
    var toggles = list.querySelectorAll(".toggle");
    if (toggles.length === 0) {
      input.focus();
      return;
    }
    toggles[Math.min(index, toggles.length - 1)].focus();
  }

  // ---- the server (signed in) ----

  function serverId(id) {
    return serverIds[id] || id;
  }

  // Runs call(collection) after the calls before it, when signed in; a refused call shows why and reloads the
  // server's list, so the page never shows what the server does not hold.
  function remote(call) {
    if (!user || !client) return;
    var who = user;
    queue = queue.then(function () {
      if (user !== who) return null;
      return call(client.data.collection("todos"));
    }).catch(function (e) {
      if (user !== who) return;
      showError(e);
      return fetchServer();
    });
  }

  // The signed-in person's todos, every page of them, oldest first.
  function fetchServer() {
    var who = user, items = [];
    function page(cursor) {
      return client.data.collection("todos").list({ sort: "createdAt", limit: 100, cursor: cursor }).then(function (r) {
        items = items.concat(r.items);
        return r.nextCursor && items.length < 10000 ? page(r.nextCursor) : items;
      });
    }
    busy(true);
    return page(undefined).then(function (all) {
      if (user !== who) return;
      busy(false);
      serverIds = {};
      todos = all.map(function (t) {
        return { id: t.id, title: String(t.title).slice(0, MAX_TITLE), completed: t.completed === true };
      });
      render();
    }).catch(function (e) {
      if (user === who) busy(false);
      showError(e);
    });
  }

  function busy(on) {
    loading = on;
    if (on) list.setAttribute("aria-busy", "true");
    else list.removeAttribute("aria-busy");
  }

  function showError(e) {
    accountError.textContent = (e && e.message) || "The server did not answer.";
    accountError.hidden = false;
    if (!user) signIn.open = true;
  }

  // The page for a person signed in (u) or not (null): the server's todos, or this browser's again.
  function setUser(u) {
    if ((u && u.id) === (user && user.id)) return;
    user = u || null;
    serverIds = {};
    accountError.hidden = true;
    signIn.hidden = !!user;
    signedIn.hidden = !user;
    accountEmail.textContent = user ? user.email : "";
    tagline.textContent = user ? "Saved on the server for your account; only you can see them." : LOCAL_TAGLINE;
    if (user) {
      todos = [];
      render();
      fetchServer();
    } else {
      busy(false);
      todos = load();
      render();
    }
  }

  function startBackend() {
    // the site's backend (an ES module on the site's own origin); without one (a file opened from disk,
    // another host), the list stays in this browser and the account section goes away
    import("/_svc/client.js").then(function (mod) {
      client = mod;
      mod.auth.onChange(setUser);
      return mod.auth.user().then(setUser);
    }).catch(function () {
      if (!client) account.hidden = true;
    });

    signInForm.addEventListener("submit", function (event) {
      event.preventDefault();
      if (!client) return;
      var up = event.submitter && event.submitter.name === "up";
      var email = signInForm.elements.email.value, password = signInForm.elements.password.value;
      accountError.hidden = true;
      (up ? client.auth.signUp(email, password) : client.auth.signIn(email, password)).then(function () {
        signInForm.reset();
      }, showError);
    });

    signOutButton.addEventListener("click", function () {
      if (client) client.auth.signOut().catch(showError);
    });
  }

  // ---- view ----

  function visible(t) {
    if (filter === "active") return !t.completed;
    if (filter === "completed") return t.completed;
    return true;
  }

  function renderItem(t) {
    var li = document.createElement("li");
    li.className = "todo" + (t.completed ? " is-completed" : "");
    li.dataset.id = t.id;

    var checkboxId = "todo-" + t.id;
    var checkbox = document.createElement("input");
    checkbox.type = "checkbox";
    checkbox.className = "toggle";
    checkbox.id = checkboxId;
    checkbox.checked = t.completed;

    var label = document.createElement("label");
    label.htmlFor = checkboxId;
    label.className = "title";
    label.textContent = t.title; // text only: a title can never become markup

    var remove = document.createElement("button");
    remove.type = "button";
    remove.className = "delete";
    remove.setAttribute("aria-label", "Delete \u201c" + t.title + "\u201d");
    remove.title = "Delete";
    remove.textContent = "\u00d7";

    li.appendChild(checkbox);
    li.appendChild(label);
    li.appendChild(remove);
    return li;
  }

  function render() {
    var shown = todos.filter(visible);
    var left = todos.filter(function (t) {
      return !t.completed;
    }).length;
    var done = todos.length - left;

    list.textContent = "";
    shown.forEach(function (t) {
      list.appendChild(renderItem(t));
    });

    emptyState.hidden = shown.length > 0;
    if (todos.length === 0) emptyState.textContent = "Nothing here yet. Add your first todo above.";
    else if (filter === "active") emptyState.textContent = "All done. Nice work!";
    else emptyState.textContent = "No completed todos yet.";

    toolbar.hidden = todos.length === 0;
    count.textContent = left + (left === 1 ? " item left" : " items left");
    clearButton.hidden = done === 0;
    filterButtons.forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.dataset.filter === filter));
    });
  }

  // ---- events ----

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (addTodo(input.value)) input.value = "";
    input.focus();
  });

  input.addEventListener("keydown", function (event) {
    if (event.key === "Escape") input.value = "";
  });

  list.addEventListener("change", function (event) {
    var li = event.target.closest(".todo");
    if (li && event.target.classList.contains("toggle")) toggleTodo(li.dataset.id);
    var again = li && list.querySelector('[data-id="' + cssEscape(li.dataset.id) + '"] .toggle');
    if (again) again.focus();
  });

  list.addEventListener("click", function (event) {
    var button = event.target.closest(".delete");
    if (button) deleteTodo(button.closest(".todo").dataset.id);
  });

  list.addEventListener("keydown", function (event) {
    var li = event.target.closest(".todo");
    if (!li) return;
    if (event.key === "Delete" && event.target.classList.contains("toggle")) {
      event.preventDefault();
      deleteTodo(li.dataset.id);
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      var toggles = Array.prototype.slice.call(list.querySelectorAll(".toggle"));
      var at = toggles.indexOf(li.querySelector(".toggle"));
      var next = toggles[at + (event.key === "ArrowDown" ? 1 : -1)];
      if (next) {
        event.preventDefault();
        next.focus();
      }
    }
  });

  filterButtons.forEach(function (b) {
    b.addEventListener("click", function () {
      setFilter(b.dataset.filter);
    });
  });

  clearButton.addEventListener("click", clearCompleted);

  window.addEventListener("hashchange", function () {
    var name = window.location.hash.replace(/^#\/?/, "") || "all";
    if (FILTERS.indexOf(name) >= 0 && name !== filter) setFilter(name);
  });

  // Another tab changed the list: show it here too.
  window.addEventListener("storage", function (event) {
    if (event.key === STORAGE_KEY && !user) {
      todos = load();
      render();
    }
  });

  function cssEscape(value) {
    return window.CSS && CSS.escape ? CSS.escape(value) : value.replace(/["\\]/g, "\\$&");
  }

  render();
  startBackend();
})();
