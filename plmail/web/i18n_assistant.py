"""German text of the assistant's administration section and the sorting settings (merged in i18n)."""

from __future__ import annotations

ASSISTANT_GERMAN: dict[str, str] = {
    # Administration → Assistant
    "Assistant": "Assistent",
    "An optional language model sorts new mail into the inbox tabs. Without one, plmail sorts by its rules alone.":
        "Ein optionales Sprachmodell sortiert neue Mail in die Posteingangs-Tabs. Ohne Modell sortiert plmail "
        "allein nach seinen Regeln.",
    "Kind of endpoint": "Art des Endpunkts",
    "OpenAI-compatible (chat completions)": "OpenAI-kompatibel (Chat Completions)",
    "Ollama": "Ollama",
    "Endpoint URL": "Adresse des Endpunkts",
    "Model": "Modell",
    "API key (optional)": "API-Schlüssel (optional)",
    "stored; leave empty to keep it": "gespeichert; leer lassen, um ihn zu behalten",
    "Give the model this many seconds to answer": "So viele Sekunden hat das Modell für eine Antwort",
    "Hold new mail until the assistant has sorted it": "Neue Mail zurückhalten, bis der Assistent sie einsortiert hat",
    "Show held mail after at most this many seconds": "Zurückgehaltene Mail spätestens nach so vielen Sekunden zeigen",
    "Test connection": "Verbindung testen",
    "Held mail": "Zurückgehaltene Mail",
    "Messages held and released": "Zurückgehaltene und freigegebene Nachrichten",
    "Median hold": "Median der Wartezeit",
    "95th percentile": "95. Perzentil",
    "Shown before the model answered": "Angezeigt, bevor das Modell geantwortet hatte",
    "The model answered in {ms} ms: {category}.": "Das Modell hat in {ms} ms geantwortet: {category}.",
    "Enter an endpoint URL and a model first.": "Gib zuerst die Adresse des Endpunkts und ein Modell an.",
    "The model did not answer in time.": "Das Modell hat nicht rechtzeitig geantwortet.",
    "The model refused to answer.": "Das Modell hat die Antwort verweigert.",
    "The model answered, but not with one of the five tabs.":
        "Das Modell hat geantwortet, aber mit keinem der fünf Tabs.",
    "The model host cannot be reached or rejected the request.":
        "Der Modell-Host ist nicht erreichbar oder hat die Anfrage abgelehnt.",
    "Hold mail between 2 and 300 seconds.": "Mail zwischen 2 und 300 Sekunden zurückhalten.",
    "Give the model between 1 and 300 seconds to answer.":
        "Gib dem Modell zwischen 1 und 300 Sekunden für eine Antwort.",
    "Choose an OpenAI-compatible or an Ollama endpoint.": "Wähle einen OpenAI-kompatiblen oder einen Ollama-Endpunkt.",
    "The model URL must start with http:// or https://.":
        "Die Adresse des Modells muss mit http:// oder https:// beginnen.",
    "Name the model to use.": "Nenne das Modell, das verwendet werden soll.",
    # queues
    "Oldest waiting": "Wartet am längsten",
    "{n} s": "{n} s",
    "{n} min": "{n} min",
    "Retry": "Erneut versuchen",
    "Discard": "Verwerfen",
    "Discard this failed job? It will not run again.":
        "Diesen fehlgeschlagenen Job verwerfen? Er läuft dann nicht mehr.",
    # Settings → Inbox tabs
    "Inbox tabs": "Posteingangs-Tabs",
    "Who sorts new mail": "Wer neue Mail sortiert",
    "The assistant, with the rules as a fallback": "Der Assistent, mit den Regeln als Rückfall",
    "The rules alone": "Allein die Regeln",
    "No assistant is set up on this installation, so the rules sort your mail.":
        "Auf dieser Installation ist kein Assistent eingerichtet, deshalb sortieren die Regeln deine Mail.",
    "Tabs": "Tabs",
    "Mail for a tab you switch off goes to General.": "Mail für einen ausgeschalteten Tab landet unter Allgemein.",
    "Saved. Your mail is being sorted again.": "Gespeichert. Deine Mail wird neu sortiert.",
    "Choose who sorts your mail.": "Wähle, wer deine Mail sortiert.",
    "The General tab cannot be switched off.": "Der Tab Allgemein lässt sich nicht ausschalten.",
}
