// A form marked data-confirm asks before it is sent (retiring a bot): the browser's
// own dialog, and on OK the form goes with confirmed=yes. Without JavaScript the
// server answers the unconfirmed form with a page that asks the same (confirm.html).
"use strict";
document.querySelectorAll("form[data-confirm]").forEach((form) => {
  form.addEventListener("submit", (event) => {
    if (!window.confirm(form.dataset.confirm)) {
      event.preventDefault();
      return;
    }
    let confirmed = form.querySelector("input[name=confirmed]");
    if (!confirmed) {
      confirmed = document.createElement("input");
      confirmed.type = "hidden";
      confirmed.name = "confirmed";
      form.appendChild(confirmed);
    }
    confirmed.value = "yes";
  });
});
