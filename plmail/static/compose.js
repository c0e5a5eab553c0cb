// The composer's behaviour that htmx cannot give: the rich-text editor (Trix) wired to the form, autosave two
// seconds after typing stops (and on leaving the page), uploads one file at a time with progress, pasted images
// kept as inline parts, keyboard selection of address suggestions, the signature swapped with the From, and
// the composer's keys Ctrl+Enter and Esc (c, r, a and f are keys.js's), recipients as chips, and new mail as
// panels docked over the list (several at once, each its own draft). Every text it shows comes translated from
// the page.
(function () {
  "use strict";

  var AUTOSAVE_DELAY = 2000;  // the issue's "2 s after typing stops"
  var MIN_BODY_CHARS = 5;  // a draft is worth keeping once the subject or five characters of text exist

  if (window.Trix) {
    // A caption under a pasted image would go out as text in the mail.
    window.Trix.config.attachments.preview.caption = { name: false, size: false };
  }

  function csrfHeader() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["x-csrftoken"] || "";
    } catch (e) {
      return "";
    }
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (_, key) { return values[key] !== undefined ? values[key] : ""; });
  }

  function trixText(html) {
    if (!html || !window.Trix || !window.Trix.HTMLParser) return "";
    return window.Trix.HTMLParser.parse(html).getDocument().toString().replace(/\n$/, "");
  }

  function textToHtml(text) {
    return text.split("\n").map(function (line) {
      var div = document.createElement("div");
      div.textContent = line;
      return "<div>" + (line ? div.innerHTML : "<br>") + "</div>";
    }).join("");
  }

  // An address as the person reads it: the name, or the address where there is none.
  function splitAddress(text) {
    var match = /^\s*(?:"?([^"<]*?)"?\s*)<([^>]*)>\s*$/.exec(text);
    if (match) return { name: match[1].trim(), email: match[2].trim() };
    return { name: "", email: text.trim() };
  }

  // A list of addresses typed or pasted: commas and semicolons part them, except inside quotes or <…>.
  function splitAddresses(text) {
    var pieces = [];
    var current = "";
    var quoted = false;
    var angle = false;
    for (var i = 0; i < text.length; i++) {
      var ch = text[i];
      if (ch === '"') quoted = !quoted;
      else if (ch === "<") angle = true;
      else if (ch === ">") angle = false;
      if ((ch === "," || ch === ";" || ch === "\n" || ch === "\r" || ch === "\t") && !quoted && !angle) {
        pieces.push(current);
        current = "";
      } else {
        current += ch;
      }
    }
    pieces.push(current);
    return pieces.map(function (p) { return p.trim(); }).filter(Boolean);
  }

  var ADDRESS = /^[^\s@<>",;]+@[^\s@<>",;]+\.[^\s@<>",;]+$/;

  // Initials on a colour that the address always gets, as the thread's sender avatars.
  function avatar(name, email) {
    var span = document.createElement("span");
    span.className = "avatar";
    span.setAttribute("aria-hidden", "true");
    var words = (name || email.split("@")[0]).replace(/[^\p{L}\p{N}\s]/gu, " ").trim().split(/\s+/);
    var initials = words.length > 1 ? words[0][0] + words[words.length - 1][0] : (words[0] || "?").slice(0, 1);
    span.textContent = initials.toUpperCase();
    var hash = 0x811c9dc5;  // FNV-1a: addresses that differ only a little still get hues far apart
    var key = email.toLowerCase();
    for (var i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 16777619);
    span.style.setProperty("--avatar-hue", String((hash >>> 0) % 360));
    return span;
  }

  function svgIcon(name) {
    var svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("class", "icon");
    svg.setAttribute("aria-hidden", "true");
    svg.setAttribute("focusable", "false");
    var use = document.createElementNS("http://www.w3.org/2000/svg", "use");
    use.setAttribute("href", "/static/icons/lucide.svg#" + name);
    svg.appendChild(use);
    return svg;
  }

  function Composer(shell) {
    this.shell = shell;
    this.panel = shell.closest("[data-compose-window]");
    // In a panel, the panel (a dialog named by its title) is what a screen reader names; two regions both called
    // "Write a message" would be landmarks no one can tell apart.
    if (this.panel) shell.removeAttribute("aria-label");
    this.form = shell.querySelector("form.composer");
    this.format = this.form.querySelector("[data-format]");
    this.plain = this.form.querySelector("[data-plain]");
    this.editorBox = this.form.querySelector("[data-editor]");
    this.editorElement = this.form.querySelector("trix-editor");
    this.identity = this.form.querySelector("[data-identity]");
    this.status = this.form.querySelector("[data-save-status]");
    this.files = this.form.querySelector("[data-files]");
    this.uploads = this.form.querySelector("[data-uploads]");
    this.attachError = this.form.querySelector("[data-attach-error]");
    this.limit = parseInt(shell.dataset.sizeLimit || "0", 10) || 25 * 1024 * 1024;
    this.queue = Promise.resolve();
    this.busy = 0;
    this.removals = [];  // files taken off the list, by name and size, in order
    this.timer = null;
    this.done = false;
    this.pendingBytes = 0;
    this.currentIdentity = this.identity ? this.identity.selectedOptions[0] : null;
    this.start();
  }

  Composer.prototype.start = function () {
    var self = this;
    var rich = this.format.dataset.format === "rich" && this.editorElement && window.Trix;
    this.setFormat(rich ? "rich" : "plain");
    var toggle = this.form.querySelector("[data-format-toggle]");
    if (toggle && window.Trix) {
      toggle.hidden = false;
      this.updateToggle(toggle);
      toggle.addEventListener("click", function () {
        if (self.format.value === "rich") {
          self.plain.value = self.editorText();
          self.setFormat("plain");
        } else {
          self.setFormat("rich");
          self.whenEditor(function (editor) { editor.loadHTML(textToHtml(self.plain.value)); });
        }
        self.updateToggle(toggle);
        self.changed();
      });
    }
    this.shell.classList.add("enhanced");
    // The paperclip sits in the bottom bar beside Send; the chips of what is attached stay above it.
    var attach = this.form.querySelector(".attachments-zone .attach");
    var sendGroup = this.form.querySelector(".composer-actions .send-group");
    if (attach && sendGroup) sendGroup.parentNode.insertBefore(attach, sendGroup.nextSibling);
    this.form.querySelectorAll("[data-close]").forEach(function (b) {
      b.hidden = false;
      b.addEventListener("click", function () { self.close(); });
    });
    this.showRemoveButtons();
    this.form.addEventListener("input", function (e) {
      if (e.target.matches("[data-attach]")) return;
      self.changed();
    });
    this.form.addEventListener("trix-change", function () { self.changed(); });
    this.form.addEventListener("trix-file-accept", function (e) {
      if (!e.file || !/^image\//.test(e.file.type)) {  // not an image: an ordinary attachment
        e.preventDefault();
        self.upload([e.file]);
      }
    });
    this.form.addEventListener("trix-attachment-add", function (e) { self.pasted(e.attachment); });
    if (this.identity) {
      this.identity.addEventListener("change", function () { self.swapSignature(); });
    }
    var picker = this.form.querySelector("[data-attach]");
    if (picker) {
      picker.addEventListener("change", function () {
        var chosen = Array.prototype.slice.call(picker.files || []);
        picker.value = "";
        self.upload(chosen);
      });
    }
    var zone = this.panel || this.shell;  // a docked panel takes files dropped anywhere on it
    zone.addEventListener("dragover", function (e) {
      if (e.dataTransfer && Array.prototype.indexOf.call(e.dataTransfer.types, "Files") >= 0) {
        e.preventDefault();
        zone.classList.add("dropping");
      }
    });
    zone.addEventListener("dragleave", function (e) {
      if (!e.relatedTarget || !zone.contains(e.relatedTarget)) zone.classList.remove("dropping");
    });
    zone.addEventListener("drop", function (e) {
      zone.classList.remove("dropping");
      if (!e.dataTransfer || !e.dataTransfer.files.length) return;
      if (e.target.closest && e.target.closest("trix-editor")) return;  // Trix takes it (images inline)
      e.preventDefault();
      self.upload(Array.prototype.slice.call(e.dataTransfer.files));
    });
    this.files.addEventListener("click", function (e) {
      var remove = e.target.closest("[data-remove-file]");
      if (!remove) return;
      var row = remove.closest("li");
      self.removals.push(fileKey(row));
      row.remove();
      self.saveNow();
    });
    // Offline, the service worker keeps a send for later and answers with X-Plmail-Queued: the composer stays,
    // says the message goes once plmail is back online, and sends nothing more itself.
    this.shell.addEventListener("htmx:beforeSwap", function (e) {  // fired on the swap's target, the shell
      var xhr = e.detail.xhr;
      if (!xhr || xhr.getResponseHeader("X-Plmail-Queued") !== "send") return;
      e.detail.shouldSwap = false;
      clearTimeout(self.timer);
      self.timer = null;
      self.done = true;
      var note = self.form.querySelector("[data-offline-send]");
      if (note) note.hidden = false;
      if (self.panel) (self.panel.closest(".compose-slot") || self.panel).hidden = false;  // it says so there
      self.form.querySelectorAll("button[type=submit]").forEach(function (b) { b.disabled = true; });
    });
    // A send or discard waits for the save in flight: it names the draft that save produces.
    this.form.addEventListener("htmx:confirm", function (e) {
      if (e.detail.verb !== "post") return;  // the address suggestions are GETs
      self.syncEditor();
      clearTimeout(self.timer);
      self.timer = null;
      var submitter = e.detail.triggeringEvent && e.detail.triggeringEvent.submitter;
      var discarding = e.detail.elt && e.detail.elt.value === "discard";  // may yet be declined at the prompt
      var sending = !discarding && (!submitter || submitter.value !== "save");  // a send or a schedule
      if (sending && !self.form.elements.subject.value.trim() && !self.askedSubject) {
        self.askedSubject = true;  // asked once: a second Send goes without asking again
        if (!window.confirm(self.shell.dataset.textNoSubject)) {
          e.preventDefault();
          self.form.elements.subject.focus();
          return;
        }
      }
      if (sending) {
        self.done = true;
        // A panel goes at once, as in Gmail; a refusal brings the composer back in it (panelOutcome).
        if (self.panel) (self.panel.closest(".compose-slot") || self.panel).hidden = true;
      }
      if (self.busy > 0) {
        e.preventDefault();
        self.queue.then(function () { e.detail.issueRequest(false); });
      }
    });
    // What the composer opened with (the signature, the quote, the forwarded files) is not input: nothing is
    // saved until the person changes it. The rich editor fills in after it starts, so it is taken again then.
    this.initial = this.bodyText();
    this.lastSaved = this.snapshot();
    if (this.format.value === "rich") {
      this.whenEditor(function () {
        if (self.lastSaved === self.openedWith) {
          self.initial = self.bodyText();
          self.lastSaved = self.snapshot();
          self.openedWith = self.lastSaved;
        }
      });
    }
    this.openedWith = this.lastSaved;
    this.openedSubject = this.form.elements.subject.value.trim();
    this.answering = this.isAnswer();
    this.address();
    this.formatting();
    this.panelParts();
    if (!this.shell.classList.contains("inline") && this.isAnswer() && this.recipients("to")) this.focusStart();
  };

  // The addresses a field holds: its chips, then what is typed and not yet a chip.
  Composer.prototype.recipients = function (name) {
    var input = this.form.elements[name];
    if (!input) return "";
    var box = input.closest("[data-recipients]");
    var chips = box ? Array.prototype.map.call(box.querySelectorAll(".recipient"), function (c) {
      return c.dataset.address;
    }) : [];
    var typed = input.value.trim();
    if (typed) chips.push(typed);
    return chips.join(", ");
  };

  // Remove formatting: Trix has no action for it; each active style of the selection is taken off.
  Composer.prototype.formatting = function () {
    var self = this;
    var button = this.form.querySelector("[data-remove-formatting]");
    if (!button) return;
    button.addEventListener("mousedown", function (e) { e.preventDefault(); });  // the selection stays
    button.addEventListener("click", function () {
      self.whenEditor(function (editor) {
        ["bold", "italic", "strike", "href", "code", "heading1", "quote", "bullet", "number"].forEach(function (name) {
          if (editor.attributeIsActive(name)) editor.deactivateAttribute(name);
        });
        self.editorElement.focus();
      });
    });
  };

  // A docked panel: its title follows the subject; Cc and Bcc wait behind their buttons until wanted.
  Composer.prototype.panelParts = function () {
    var panel = this.panel;
    if (!panel) return;
    var title = panel.querySelector("[data-compose-title]");
    var subject = this.form.elements.subject;
    var retitle = function () { title.textContent = subject.value.trim() || title.dataset.untitled; };
    subject.addEventListener("input", retitle);
    retitle();
    var toggles = this.form.querySelector("[data-copy-toggles]");
    if (!toggles) return;
    var form = this.form;
    var update = function () {
      var hidden = 0;
      toggles.querySelectorAll("[data-show-row]").forEach(function (b) {
        var row = form.querySelector("[data-recipient-row=" + b.dataset.showRow + "]");
        b.hidden = !row.classList.contains("recipients-empty") || row.classList.contains("open");
        if (!b.hidden) hidden += 1;
      });
      toggles.hidden = hidden === 0;
    };
    toggles.addEventListener("click", function (e) {
      var b = e.target.closest("[data-show-row]");
      if (!b) return;
      var row = form.querySelector("[data-recipient-row=" + b.dataset.showRow + "]");
      row.classList.add("open");
      update();
      row.querySelector("input").focus();
    });
    update();
  };

  Composer.prototype.isAnswer = function () {
    var f = this.form.elements;
    return !!(f.in_reply_to.value || f.answers || f.forwards) && !f.draft_id.value;
  };

  // The cursor above the quote or the forwarded block (and the signature), as Gmail and Fastmail place it.
  Composer.prototype.focusStart = function (then) {
    var self = this;
    if (this.format.value === "rich") {
      this.whenEditor(function (editor) {
        self.editorElement.focus();
        editor.setSelectedRange([0, 0]);
        if (then) then(null, editor);
      });
    } else {
      this.plain.focus();
      this.plain.setSelectionRange(0, 0);
      if (then) then(this.plain, null);
    }
  };

  // The page's address names the composition, so a reload reopens what was typed (not inline: a thread's page).
  Composer.prototype.remember = function (composition) {
    if (!composition || this.shell.classList.contains("inline") || !window.history.replaceState) return;
    if (window.location.pathname !== "/compose") return;
    window.history.replaceState(window.history.state, "", "/compose?draft=" + encodeURIComponent(composition));
  };

  Composer.prototype.whenEditor = function (callback) {
    var element = this.editorElement;
    if (!element) return;
    if (element.editor) { callback(element.editor); return; }
    element.addEventListener("trix-initialize", function () { callback(element.editor); }, { once: true });
  };

  Composer.prototype.setFormat = function (value) {
    this.format.value = value;
    var rich = value === "rich";
    if (this.editorBox) this.editorBox.hidden = !rich;
    this.plain.closest("label").hidden = rich;
  };

  Composer.prototype.updateToggle = function (toggle) {
    toggle.textContent = this.format.value === "rich" ? toggle.dataset.toPlain : toggle.dataset.toRich;
  };

  Composer.prototype.editorText = function () {
    var element = this.editorElement;
    return element && element.editor ? element.editor.getDocument().toString().replace(/\n$/, "") : "";
  };

  Composer.prototype.bodyText = function () {
    return this.format.value === "rich" ? this.editorText() : this.plain.value;
  };

  // Trix fills its input when it renders; the keys typed a moment ago must be in what is saved.
  Composer.prototype.syncEditor = function () {
    var controller = this.editorElement && this.editorElement.editorController;
    if (this.format.value === "rich" && controller && controller.updateInputElement) controller.updateInputElement();
  };

  Composer.prototype.snapshot = function () {
    this.syncEditor();
    var data = new FormData(this.form);
    var parts = [];
    data.forEach(function (value, key) {
      // What the person wrote; the draft's id and part paths change with every save the server makes.
      if (typeof value === "string" && !/^(_csrf_token|draft_id|keep_part)$/.test(key)) parts.push(key + "=" + value);
    });
    return parts.join("&");
  };

  // Input, not what the composer opened with: a subject of one's own, or text typed (five characters of new
  // mail; any in an answer, whose subject came with it).
  Composer.prototype.worthSaving = function () {
    if (this.form.elements.draft_id.value) return true;
    var subject = this.form.elements.subject.value.trim();
    if (subject && subject !== this.openedSubject) return true;
    var typed = this.bodyText().replace(this.initial, "");
    return typed.replace(/\s+/g, "").length >= (this.answering ? 1 : MIN_BODY_CHARS);
  };

  Composer.prototype.changed = function () {
    var self = this;
    if (this.done) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(function () {
      self.timer = null;
      if (self.snapshot() === self.lastSaved) {
        // Back to what the last save kept (a refused change undone): that is saved, whatever the last try said.
        if (self.status.classList.contains("error")) self.say("saved");
      } else if (self.worthSaving()) {
        self.save({});
      }
    }, AUTOSAVE_DELAY);
  };

  function fileKey(row) {
    var name = row.querySelector(".name");
    return (name ? name.textContent : "") + "\u0000" + (row.dataset.size || "");
  }

  Composer.prototype.saveNow = function () {
    clearTimeout(this.timer);
    this.timer = null;
    return this.save({});
  };

  Composer.prototype.say = function (state, reason) {
    var data = this.shell.dataset;
    var text = state === "saving" ? data.textSaving : state === "saved" ? data.textSaved
      : fill(data.textNotSaved, { reason: reason || "" });
    this.status.textContent = text;
    this.status.classList.toggle("error", state === "failed");
  };

  // One save at a time, in order: each names the version the one before it produced.
  Composer.prototype.save = function (extra) {
    var self = this;
    this.busy += 1;
    var run = function () { return self.post(extra); };
    this.queue = this.queue.then(run, run).then(function (result) {
      self.busy -= 1;
      return result;
    });
    return this.queue;
  };

  Composer.prototype.formData = function () {
    this.syncEditor();
    var data = new FormData(this.form);
    data.delete("attachments");
    data.delete("action");
    data.set("action", "save");
    data.set("autosave", "1");
    return data;
  };

  Composer.prototype.post = function (extra) {
    var self = this;
    return new Promise(function (resolve) {
      var data = self.formData();
      (extra.files || []).forEach(function (file) { data.append("attachments", file, file.name); });
      (extra.inline || []).forEach(function (file) { data.append("inline_images", file, file.name || "image.png"); });
      var snapshot = self.snapshot();
      var removalsSent = self.removals.length;
      var xhr = new XMLHttpRequest();
      xhr.open("POST", "/compose");
      xhr.setRequestHeader("x-csrftoken", csrfHeader());
      if (extra.progress) {
        xhr.upload.addEventListener("progress", function (e) {
          if (e.lengthComputable) extra.progress(e.loaded / e.total);
        });
      }
      xhr.addEventListener("load", function () {
        if (xhr.status === 200) {
          self.form.elements.draft_id.value = xhr.getResponseHeader("X-Draft-Id") || "";
          self.remember(xhr.getResponseHeader("X-Composition-Id"));
          self.files.innerHTML = xhr.responseText;
          // A file taken off while this save was on its way is still in its answer: take it off again, so
          // the save queued behind this one (and a send) leaves it out.
          self.removals.slice(removalsSent).forEach(function (key) {
            var rows = Array.prototype.slice.call(self.files.querySelectorAll("li"));
            var again = rows.filter(function (li) { return fileKey(li) === key; })[0];
            if (again) again.remove();
          });
          self.showRemoveButtons();
          self.lastSaved = snapshot;
          self.say("saved");
          var urls = (xhr.getResponseHeader("X-Inline-Urls") || "").split(" ").filter(Boolean);
          resolve({ ok: true, urls: urls });
        } else {
          var reason = xhr.status === 400 ? xhr.responseText : xhr.statusText || String(xhr.status);
          self.say("failed", reason);
          resolve({ ok: false, reason: reason });
        }
      });
      xhr.addEventListener("error", function () {
        self.say("failed", navigator.onLine === false ? "offline" : "network");
        resolve({ ok: false, reason: "network" });
      });
      self.say("saving");
      xhr.send(data);
    });
  };

  Composer.prototype.showRemoveButtons = function () {
    this.files.querySelectorAll("[data-remove-file]").forEach(function (b) { b.hidden = false; });
  };

  Composer.prototype.attachedBytes = function () {
    var total = 0;
    this.files.querySelectorAll("[data-size]").forEach(function (li) { total += parseInt(li.dataset.size, 10) || 0; });
    return total + this.pendingBytes;
  };

  Composer.prototype.upload = function (chosen) {
    var self = this;
    var megabytes = function (bytes) { return (bytes / (1024 * 1024)).toFixed(1); };
    this.attachError.hidden = true;
    chosen.forEach(function (file) {
      var total = self.attachedBytes() + file.size;
      if (total > self.limit) {
        self.attachError.textContent = fill(self.shell.dataset.textTooLarge, {
          limit: Math.round(self.limit / (1024 * 1024)), name: file.name, size: megabytes(total),
        });
        self.attachError.hidden = false;
        return;
      }
      self.pendingBytes += file.size;
      var row = document.createElement("li");
      row.className = "upload chip";
      var clip = self.form.querySelector(".attach .icon");  // the page's own paperclip
      row.appendChild(clip ? clip.cloneNode(true) : svgIcon("paperclip"));
      var name = document.createElement("span");
      name.className = "name";
      name.textContent = file.name;
      var bar = document.createElement("progress");
      bar.max = 1;
      bar.value = 0;
      bar.setAttribute("aria-label", file.name);
      row.appendChild(name);
      row.appendChild(bar);
      self.uploads.appendChild(row);
      self.save({ files: [file], progress: function (share) { bar.value = share; } }).then(function (result) {
        self.pendingBytes -= file.size;
        if (result.ok) {
          row.remove();
        } else {
          row.classList.add("error");
          row.textContent = fill(self.shell.dataset.textUploadFailed, { name: file.name, reason: result.reason });
        }
      });
    });
  };

  Composer.prototype.pasted = function (attachment) {
    if (!attachment.file) return;
    this.save({ inline: [attachment.file] }).then(function (result) {
      if (result.ok && result.urls[0]) {
        attachment.setAttributes({ url: result.urls[0], href: result.urls[0] });
      } else {
        attachment.remove();
      }
    });
  };

  Composer.prototype.swapSignature = function () {
    var before = this.currentIdentity;
    var after = this.identity.selectedOptions[0];
    this.currentIdentity = after;
    if (!before || !after || before === after) return;
    var answering = !!this.form.elements.in_reply_to.value || !!this.form.elements.answers;
    if (this.format.value === "rich") {
      var oldText = trixText(before.dataset.signatureHtml);
      var newHtml = after.dataset.signatureHtml;
      this.whenEditor(function (editor) {
        var doc = editor.getDocument().toString();
        var at = oldText ? doc.indexOf(oldText) : -1;
        if (at >= 0) {
          editor.setSelectedRange([at, at + oldText.length]);
          editor.deleteInDirection("forward");
        } else {
          at = answering ? 1 : doc.length - 1;
          editor.setSelectedRange([at, at]);
        }
        if (newHtml) editor.insertHTML(newHtml);
      });
    } else {
      var oldSig = before.dataset.signatureText;
      var newSig = after.dataset.signatureText;
      var value = this.plain.value;
      var index = oldSig ? value.indexOf(oldSig) : -1;
      if (index >= 0) {
        this.plain.value = value.slice(0, index) + newSig + value.slice(index + oldSig.length);
      } else if (newSig) {
        this.plain.value = answering ? "\n\n" + newSig + "\n" + value : value.replace(/\s*$/, "") + "\n\n" + newSig;
      }
    }
    this.initial = this.bodyText();
    this.changed();
  };

  Composer.prototype.send = function () {
    var button = this.form.querySelector("[data-send]");
    if (button && !this.done) button.click();  // a click: htmx sends the button's action=send with the form
  };

  Composer.prototype.close = function () {
    var self = this;
    clearTimeout(this.timer);
    this.done = true;
    var finish = function () {
      if (!self.shell.isConnected) return;
      if (self.panel) {
        closePanel(self.panel, self.form.elements.draft_id.value ? self.shell.dataset.textClosed : "");
      } else if (self.shell.classList.contains("inline")) {
        var note = document.createElement("p");
        note.className = "muted";
        note.setAttribute("role", "status");
        note.textContent = self.form.elements.draft_id.value ? self.shell.dataset.textClosed : "";
        self.shell.replaceWith(note);
      } else {
        var back = document.referrer;
        var here = window.location.origin;
        window.location.href = back && back.indexOf(here) === 0 && back.indexOf(here + "/compose") !== 0 ? back : "/";
      }
    };
    setTimeout(function () {  // after the editor has taken the last keys in
      if (self.snapshot() !== self.lastSaved && self.worthSaving()) {
        self.save({}).then(finish);
      } else {
        self.queue.then(finish);
      }
    }, 50);
  };

  Composer.prototype.leaving = function () {
    if (this.done || this.snapshot() === this.lastSaved || !this.worthSaving() || !navigator.sendBeacon) return;
    this.done = true;
    navigator.sendBeacon("/compose", this.formData());
  };

  // Address fields: each address a chip (with the person's initials) made by Enter, a comma, Tab, leaving the
  // field or choosing a suggestion, removed by its x or by Backspace in the empty field. Suggestions come from
  // htmx; choosing one with the keys or the mouse is ours. The form sends the chips and what is typed after them
  // as the field's value, so the server reads the same comma-separated list as without JavaScript.
  Composer.prototype.address = function () {
    var self = this;
    var texts = this.shell.dataset;
    this.form.addEventListener("formdata", function (e) {
      ["to", "cc", "bcc"].forEach(function (name) {
        if (self.form.elements[name]) e.formData.set(name, self.recipients(name));
      });
    });
    this.form.querySelectorAll("[data-address-field]").forEach(function (input) {
      var box = input.closest("[data-recipients]");
      var row = input.closest("[data-recipient-row]");
      var list = document.getElementById(input.getAttribute("aria-controls"));
      if (!list || !box) return;
      box.classList.add("chips");
      var chips = function () { return Array.prototype.slice.call(box.querySelectorAll(".recipient")); };
      var refresh = function () {
        if (row) row.classList.toggle("recipients-empty", !chips().length && !input.value.trim());
      };
      var addChip = function (text) {
        var parts = splitAddress(text);
        if (!parts.email) return;
        var chip = document.createElement("span");
        chip.className = "chip recipient";
        chip.dataset.address = text.trim();
        chip.title = parts.email;
        var valid = ADDRESS.test(parts.email);
        if (!valid) {
          chip.classList.add("invalid");
          chip.title = fill(texts.textNotAnAddress, { name: parts.email });
        }
        chip.appendChild(avatar(parts.name, parts.email));
        var label = document.createElement("span");
        label.className = "chip-label";
        label.textContent = parts.name || parts.email;
        chip.appendChild(label);
        var remove = document.createElement("button");
        remove.type = "button";
        remove.className = "chip-remove";
        remove.tabIndex = -1;
        remove.setAttribute("aria-label", fill(texts.textRemoveRecipient, { name: parts.name || parts.email }));
        remove.appendChild(svgIcon("x"));
        chip.appendChild(remove);
        box.insertBefore(chip, input);
      };
      var commit = function (pasted) {
        var typed = input.value + (pasted || "");  // pasted lines: a text field's value would lose the breaks
        if (!typed.trim()) return false;
        splitAddresses(typed).forEach(addChip);
        input.value = "";
        refresh();
        self.changed();
        return true;
      };
      splitAddresses(input.value).forEach(addChip);  // what the composer opened with
      input.value = "";
      refresh();
      box.addEventListener("click", function (e) {
        var remove = e.target.closest(".chip-remove");
        if (remove) {
          remove.closest(".chip").remove();
          refresh();
          self.changed();
        }
        input.focus();
      });
      var options = function () { return Array.prototype.slice.call(list.querySelectorAll("[role=option]")); };
      var active = function () { return list.querySelector("[aria-selected=true]"); };
      var mark = function (option) {
        options().forEach(function (o) { o.setAttribute("aria-selected", o === option ? "true" : "false"); });
        if (option) input.setAttribute("aria-activedescendant", option.id);
        else input.removeAttribute("aria-activedescendant");
      };
      var clear = function () {
        list.innerHTML = "";
        input.setAttribute("aria-expanded", "false");
        input.removeAttribute("aria-activedescendant");
      };
      var choose = function (option) {
        input.value = "";
        addChip(option.dataset.value);
        clear();
        refresh();
        input.focus();
        self.changed();
      };
      list.addEventListener("htmx:afterSwap", function () {
        var chosen = chips().map(function (c) { return splitAddress(c.dataset.address).email.toLowerCase(); });
        options().forEach(function (o, i) {
          var parts = splitAddress(o.dataset.value || "");
          if (chosen.indexOf(parts.email.toLowerCase()) >= 0) { o.remove(); return; }
          o.id = list.id + "-" + (i + 1);  // unique while several composers are open
          o.insertBefore(avatar(parts.name, parts.email), o.firstChild);
        });
        var found = options();
        input.setAttribute("aria-expanded", found.length ? "true" : "false");
        mark(found[0] || null);
      });
      list.addEventListener("mousedown", function (e) {
        var option = e.target.closest("[role=option]");
        if (option) {
          e.preventDefault();
          choose(option);
        }
      });
      input.addEventListener("keydown", function (e) {
        var found = options();
        var index = found.indexOf(active());
        if (found.length && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
          e.preventDefault();
          var step = e.key === "ArrowDown" ? 1 : -1;
          mark(found[(index + step + found.length) % found.length]);
        } else if ((e.key === "Enter" || e.key === "Tab") && index >= 0) {
          e.preventDefault();
          choose(found[index]);
        } else if (found.length && e.key === "Escape") {
          e.preventDefault();
          e.stopPropagation();
          clear();
        } else if (e.key === "Enter" || e.key === "," || e.key === ";") {
          if (e.ctrlKey || e.metaKey) return;  // Ctrl+Enter sends
          e.preventDefault();  // never the form's implicit submit
          if (commit()) clear();
        } else if (e.key === "Tab") {
          if (commit()) clear();
        } else if (e.key === "Backspace" && !input.value && input.selectionStart === 0) {
          var last = chips().pop();
          if (last) {
            e.preventDefault();
            last.remove();
            refresh();
            self.changed();
          }
        }
      });
      input.addEventListener("input", refresh);
      input.addEventListener("blur", function () {
        setTimeout(function () {
          clear();
          if (document.activeElement !== input) commit();
        }, 150);
      });
      input.addEventListener("paste", function (e) {
        var text = (e.clipboardData || window.clipboardData).getData("text");
        if (!/[\n\r\t;,]/.test(text)) return;
        e.preventDefault();
        commit(text);
      });
    });
  };

  var composers = [];

  // New mail on a page of its own fills a phone's screen (docked panels and answers leave the page as it is).
  function markComposing() {
    document.body.classList.toggle("composing",
      !!document.querySelector("[data-composer]:not(.inline):not([data-compose-window] [data-composer])"));
  }

  function startComposers(root) {
    var found = root.matches && root.matches("[data-composer]") ? [root] : [];
    found = found.concat(Array.prototype.slice.call((root.querySelectorAll || function () { return []; })
      .call(root, "[data-composer]")));
    found.forEach(function (shell) {
      if (shell.plmailComposer || !shell.querySelector("form.composer")) return;
      shell.plmailComposer = new Composer(shell);
      composers.push(shell.plmailComposer);
    });
    markComposing();
  }

  function openComposers() {
    composers = composers.filter(function (c) { return c.shell.isConnected && !c.done; });
    return composers;
  }

  function typing(target) {
    return window.plmailKeys ? window.plmailKeys.typing(target) : false;
  }

  // ---- The dock: new mail as panels over the list, bottom right on a desktop, the whole screen on a phone. ----

  function dock() {
    var found = document.querySelector("[data-compose-dock]");
    if (!found) {
      found = document.createElement("div");
      found.className = "compose-dock";
      found.setAttribute("data-compose-dock", "");
      document.body.appendChild(found);
    }
    return found;
  }

  function toasts() {
    var found = document.querySelector("[data-compose-toasts]");
    if (!found) {
      found = document.createElement("div");
      found.className = "compose-toasts";
      found.setAttribute("data-compose-toasts", "");
      document.body.appendChild(found);
    }
    return found;
  }

  // A short note where the sent message's toast appears ("Draft saved", "Draft discarded"), gone after a while.
  function note(text) {
    if (!text) return;
    var toast = document.createElement("div");
    toast.className = "toast";
    toast.setAttribute("role", "status");
    toast.textContent = text;
    toasts().appendChild(toast);
    setTimeout(function () { toast.remove(); }, 6000);
  }

  function panelComposer(panel) {
    var shell = panel.querySelector("[data-composer]");
    return shell && shell.plmailComposer;
  }

  function closePanel(panel, message) {
    var slot = panel.closest(".compose-slot") || panel;
    slot.remove();
    note(message);
  }

  function setMinimised(panel, minimised) {
    panel.classList.toggle("minimised", minimised);
    var button = panel.querySelector("[data-minimise]");
    if (button) {
      button.setAttribute("aria-expanded", minimised ? "false" : "true");
      var label = minimised ? button.dataset.textRestore : button.dataset.textMinimise;
      button.setAttribute("aria-label", label);
      var use = button.querySelector("use");
      if (use) use.setAttribute("href", "/static/icons/lucide.svg#" + (minimised ? "chevron-up" : "chevron-down"));
    }
  }

  // Only so many panels fit beside each other: the older ones fold down to their title bars.
  function makeRoom(keep) {
    var panels = Array.prototype.slice.call(dock().querySelectorAll("[data-compose-window]:not(.minimised)"));
    for (var i = 0; i < panels.length && dock().scrollWidth > window.innerWidth; i++) {
      if (panels[i] !== keep) setMinimised(panels[i], true);
    }
  }

  function openPanel() {
    if (!window.htmx) return false;
    var slot = document.createElement("div");
    slot.className = "compose-slot";
    dock().appendChild(slot);
    window.htmx.ajax("GET", "/compose", { target: slot, swap: "innerHTML" }).then(function () {
      var panel = slot.querySelector("[data-compose-window]");
      if (!panel) { slot.remove(); return; }
      makeRoom(panel);
      var to = panel.querySelector("input[name=to]");
      if (to) to.focus();
    });
    return true;
  }

  // Compose (the sidebar's button, or c) opens a panel instead of replacing the page's content.
  window.addEventListener("click", function (e) {
    var link = e.target.closest && e.target.closest("[data-compose-panel]");
    if (!link || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
    if (!openPanel()) return;
    e.preventDefault();
    e.stopImmediatePropagation();
  }, true);

  document.addEventListener("click", function (e) {
    var panel = e.target.closest && e.target.closest("[data-compose-window]");
    if (!panel) return;
    var composer = panelComposer(panel);
    if (e.target.closest("[data-minimise]")) {
      setMinimised(panel, !panel.classList.contains("minimised"));
      if (!panel.classList.contains("minimised")) makeRoom(panel);
    } else if (e.target.closest("[data-close-panel]")) {
      if (composer) composer.close();
      else closePanel(panel, "");
    } else if (e.target.closest("[data-pop-out]")) {
      e.preventDefault();
      if (!composer) return;
      composer.popOut();
    } else if (e.target.closest("[data-compose-title]") && panel.classList.contains("minimised")) {
      setMinimised(panel, false);
      makeRoom(panel);
    }
  });

  // The full page, with what was typed: saved first, then opened by its draft.
  Composer.prototype.popOut = function () {
    var self = this;
    clearTimeout(this.timer);
    this.done = true;
    var go = function () {
      var draft = self.form.elements.draft_id.value;
      window.location.href = draft ? "/compose?draft=" + encodeURIComponent(draft) : "/compose";
    };
    if (this.snapshot() !== this.lastSaved && this.worthSaving()) this.save({}).then(go);
    else this.queue.then(go);
  };

  // Requests from a panel say so: a discard there closes the panel instead of leaving the page.
  document.addEventListener("htmx:configRequest", function (e) {
    var elt = e.detail.elt;
    if (elt && elt.closest && elt.closest("[data-compose-window]")) e.detail.headers["X-Plmail-Panel"] = "1";
  });

  // A panel's message sent: its undo toast takes the panel's place at the bottom of the screen; should the send
  // be undone or fail, the composer comes back in its panel. A discarded panel closes with a note.
  function panelOutcome(elt) {
    if (!elt || !elt.matches) return;
    var panel = elt.closest("[data-compose-window]");
    if (panel && elt.matches(".composer-shell.sent-state")) {
      var placeholder = document.createElement("div");
      placeholder.className = "composer-shell panel-placeholder";
      panel.insertBefore(placeholder, elt);
      var slot = document.createElement("div");
      slot.setAttribute("data-panel-toast", "");
      slot.plmailPanel = panel;
      slot.appendChild(elt);
      toasts().appendChild(slot);
      (panel.closest(".compose-slot") || panel).hidden = true;
    } else if (panel && elt.matches(".composer-shell.closed")) {
      closePanel(panel, elt.textContent.trim());
      return;
    } else if (panel && elt.matches("[data-composer]")) {  // refused, with the reason: back in view
      (panel.closest(".compose-slot") || panel).hidden = false;
      setMinimised(panel, false);
    }
    var done = elt.matches(".composer-shell.sent-state") && !elt.hasAttribute("hx-trigger")
      && elt.closest("[data-panel-toast]");
    if (done && !done.plmailFading) {  // sent, scheduled or failed for good: the toast, then its panel, go
      done.plmailFading = true;
      setTimeout(function () {
        if (done.plmailPanel) (done.plmailPanel.closest(".compose-slot") || done.plmailPanel).remove();
        done.remove();
      }, 10000);
    }
  }

  document.addEventListener("htmx:beforeSwap", function (e) {
    var target = e.detail.target;
    var slot = target && target.closest && target.closest("[data-panel-toast]");
    if (!slot || !slot.plmailPanel || !/data-composer/.test(e.detail.serverResponse || "")) return;
    var panel = slot.plmailPanel;
    e.detail.target = panel.querySelector(".panel-placeholder");
    (panel.closest(".compose-slot") || panel).hidden = false;
    setMinimised(panel, false);
    setTimeout(function () { slot.remove(); }, 0);  // after the swap: its polling stops with it
  });

  document.addEventListener("keydown", function (e) {
    var inComposer = e.target.closest ? e.target.closest("[data-composer]") : null;
    var composer = inComposer && inComposer.plmailComposer;
    var panel = e.target.closest ? e.target.closest("[data-compose-window]") : null;
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter") {
      composer = composer || (panel && panelComposer(panel)) || openComposers().filter(function (c) {
        return !c.panel || !c.panel.classList.contains("minimised");
      })[0];
      if (composer) {
        e.preventDefault();
        composer.send();
      }
      return;
    }
    if (e.key === "Escape") {
      if (e.target.closest && e.target.closest(".trix-dialog")) return;
      var menu = e.target.closest && e.target.closest("details[open]");
      if (menu) { menu.open = false; return; }
      panel = panel || (composer && composer.panel);
      if (panel) {  // a docked panel folds down to its title bar; its minimise button keeps the focus
        e.preventDefault();
        if (!panel.classList.contains("minimised")) {
          setMinimised(panel, true);
          var button = panel.querySelector("[data-minimise]");
          if (button) button.focus();
        }
        return;
      }
      composer = composer || (!typing(e.target) ? openComposers().filter(function (c) { return !c.panel; }).pop()
        : null);
      if (composer) {
        e.preventDefault();
        composer.close();
      }
      return;
    }
    // c, r, a and f are keys.js's: the Compose link and the thread's answer buttons carry data-key.
  });

  // A refusal (400) and a send that can no longer be undone (409) come back as the composer with the reason.
  document.addEventListener("htmx:beforeSwap", function (e) {
    var status = e.detail.xhr.status;
    if ((status === 400 || status === 409) && e.detail.target && e.detail.target.closest(".composer-shell")) {
      e.detail.shouldSwap = true;
      e.detail.isError = false;
    }
  });
  document.addEventListener("htmx:load", function (e) {
    startComposers(e.detail.elt);
    panelOutcome(e.detail.elt);
    returnAfterSend(e.detail.elt);
  });

  // After Send in a composer of its own (the /compose page), the person goes back where they came from, as in
  // Gmail; the undo toast goes along (kept for the next page in sessionStorage).
  var SENT_KEY = "plmail.sent";

  function returnAfterSend(elt) {
    if (!elt || !elt.matches || !elt.matches(".composer-shell.sent-state:not([data-inline])")
        || elt.closest("[data-sent-toast]") || elt.closest("[data-panel-toast]")) return;
    if (window.location.pathname !== "/compose") return;
    var here = window.location.origin;
    var referrer = document.referrer;
    var back = referrer && referrer.indexOf(here) === 0 && referrer.indexOf(here + "/compose") !== 0 ? referrer : "/";
    try {
      window.sessionStorage.setItem(SENT_KEY, elt.dataset.submissionId);
    } catch (e) {
      return;  // no storage: the toast stays here
    }
    window.location.href = back;
  }

  function showSentToast() {
    var id = null;
    try {
      id = window.sessionStorage.getItem(SENT_KEY);
      window.sessionStorage.removeItem(SENT_KEY);
    } catch (e) {
      return;
    }
    var main = document.getElementById("main");
    if (!id || !/^\d+$/.test(id) || !main || !window.htmx) return;
    var slot = document.createElement("div");
    slot.setAttribute("data-sent-toast", "");
    var status = document.createElement("section");
    status.className = "composer-shell sent-state";
    status.setAttribute("hx-get", "/compose/submission/" + id);
    status.setAttribute("hx-trigger", "load");
    status.setAttribute("hx-swap", "outerHTML");
    slot.appendChild(status);
    main.appendChild(slot);
    window.htmx.process(slot);
  }
  // Back or forward through htmx's history leaves the page without a pagehide: keep what was typed first.
  document.addEventListener("htmx:beforeHistorySave", function () {
    openComposers().forEach(function (c) { c.leaving(); });
  });
  // A restored page brings copies of the panels it had, without their scripts: the drafts are saved; away.
  document.addEventListener("htmx:historyRestore", function () {
    document.querySelectorAll("[data-compose-dock], [data-compose-toasts]").forEach(function (d) { d.remove(); });
    markComposing();
  });
  // Settings → Sending: signatures are written in the same editor.
  function startSignatureForms(root) {
    if (!window.Trix) return;
    root.querySelectorAll("[data-signature-form]").forEach(function (form) {
      form.querySelector("[data-format]").value = "rich";
      form.querySelector("[data-editor]").hidden = false;
      form.querySelector("[data-plain]").closest("label").hidden = true;
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    startComposers(document);
    startSignatureForms(document);
    showSentToast();
  });
  window.addEventListener("pagehide", function () { openComposers().forEach(function (c) { c.leaving(); }); });

  // Keys typed while an answer's composer is on its way (r, then straight on writing, as one does in Gmail) are
  // kept and typed into it once it has the cursor; before, the first letters fell on the page and were lost.
  var pendingKeys = null;
  var pendingSince = 0;
  var PENDING_MS = 5000;  // a composer that never comes gives the keyboard back

  document.addEventListener("htmx:beforeRequest", function (e) {
    var path = (e.detail.requestConfig && e.detail.requestConfig.path) || "";
    if (path.indexOf("/compose?answer=") === 0) { pendingKeys = ""; pendingSince = Date.now(); }
  });
  document.addEventListener("htmx:responseError", function () { pendingKeys = null; });
  document.addEventListener("keydown", function (e) {
    if (pendingKeys === null) return;
    if (Date.now() - pendingSince > PENDING_MS) { pendingKeys = null; return; }
    if (e.ctrlKey || e.metaKey || e.altKey || e.key.length !== 1 || typing(e.target)) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    pendingKeys += e.key;
  }, true);

  function typeKept(field, editor) {
    var kept = pendingKeys;
    pendingKeys = null;
    if (!kept) return;
    if (editor) {
      editor.insertString(kept);
    } else if (field) {
      var at = field.selectionStart || 0;
      field.value = field.value.slice(0, at) + kept + field.value.slice(at);
      field.setSelectionRange(at + kept.length, at + kept.length);
      field.dispatchEvent(new Event("input", { bubbles: true }));
    }
  }

  // An answer opened inline: its first empty field, or the text.
  document.addEventListener("htmx:afterSettle", function (e) {
    var shell = e.detail.elt && e.detail.elt.querySelector && e.detail.elt.querySelector(".composer-shell.inline");
    if (!shell || !shell.plmailComposer) return;
    var c = shell.plmailComposer;
    var active = document.activeElement;
    if (active && shell.contains(active) && typing(active)) {  // already writing in one of its fields: stay there
      typeKept(/^(INPUT|TEXTAREA)$/.test(active.tagName) ? active : null, null);
      return;
    }
    if (!c.recipients("to")) {
      c.form.elements.to.focus();
      typeKept(c.form.elements.to, null);
      return;
    }
    c.focusStart(typeKept);
  });
})();
