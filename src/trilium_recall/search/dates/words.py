"""The words six languages name days with: months (prompt.py reads them), spans ("from … to …":
spans.py) and days counted from today (from_today.py, counted.py: weekdays, "yesterday", "last",
"next", "week", "month", counts, "ago"). Folded as the keyword index folds words: lower case, no
diacritics ("übernächsten" → "ubernachsten")."""

from __future__ import annotations

import re

# Month names in the six languages the prompt's language is told in (languages.MARKERS).
_MONTH_NAMES = (
    "january januar janvier enero janeiro gennaio",
    "february februar fevrier febrero fevereiro febbraio",
    "march marz mars marzo marco",
    "april avril abril aprile",
    "may mai mayo maio maggio",
    "june juni juin junio junho giugno",
    "july juli juillet julio julho luglio",
    "august aout agosto",
    "september septembre septiembre setembro settembre",
    "october oktober octobre octubre outubro ottobre",
    "november novembre noviembre novembro",
    "december dezember decembre diciembre dezembro dicembre",
)
MONTH_ABBREVIATIONS = "jan feb mar apr may jun jul aug sep oct nov dec".split()
ENGLISH_MONTHS = [names.split()[0] for names in _MONTH_NAMES]
MONTHS: dict[str, int] = {
    **{name: n for n, names in enumerate(_MONTH_NAMES, 1) for name in names.split()},
    **{name: n for n, name in enumerate(MONTH_ABBREVIATIONS, 1)},
    "sept": 9,
}
# A month's short word that is no verb ("may"): a prompt asking what a day held names it with
# the day after it and no preposition ("what did I do oct 3").
SHORT_MONTHS = frozenset({*MONTH_ABBREVIATIONS, "sept"} - {"may"})
# Each is also a verb, a planet, a sea, a name, a coordinate ("RA/Dec") or a short word.
AMBIGUOUS_MONTHS = frozenset(
    {"may", "march", "mars", "mai", "mayo", "maio", "august", "julio", "janeiro", "marco"}
    | {"april", "june", "sept", *MONTH_ABBREVIATIONS}
)
# A day of the month as written: "21", "21st", "3rd", French "1er", "3e"; an ordinal alone.
DAY_NUMBER = re.compile(r"(\d{1,2})(?:st|nd|rd|th|er|e)?")
ORDINAL = re.compile(r"(\d{1,2})(?:st|nd|rd|th|er)")
YEAR = re.compile(r"((?:19|20)\d\d)")
MONTH_OF = frozenset({"of", "de", "di", "del"})  # "28th of december", "21 de diciembre"

# Words of time that make a lone ambiguous word a month ("in may", "late march"); "the" counts
# after one of them ("during the sept outage"), and "of" after a part ("end of march").
ENGLISH_TIME_WORDS = frozenset(
    "in during since early mid late last next until till before after".split()
)
TIME_WORDS = ENGLISH_TIME_WORDS | {"anfang", "ende"}
# With a day beside it, these make it one too: "from may 19", "on may 19", "am 3. Mai", "le 3
# mars", "el 3 de mayo" ("email from jan", "hi im jan", "signals from mars" have no day).
DAY_WORDS = TIME_WORDS | frozenset(
    "from on around by im am vom seit bis le du au en el em no il al".split()
)
# A span of days: "between … and …", "from … to …", or "to" alone ("dec 18 to 21"; a dash
# between two numbers is read as "to"), with the articles each language may put before a day
# ("between the 3rd and the 9th", "zwischen dem 3. und 9. Mai", "del 3 al 9", "jusqu'au 9").
SPAN_BETWEEN = frozenset("between zwischen entre tra fra".split())
SPAN_FROM = frozenset("from vom von du del dal de da desde".split())
SPAN_AND = frozenset("and und et y e".split())
SPAN_TO = frozenset("to through thru till until bis au al a ao hasta jusqu fino".split())
SPAN_ARTICLES = frozenset("the dem zum le el il lo o au al".split())
ENGLISH_SPAN_WORDS = frozenset("between from to through thru till until and".split())
# Of AMBIGUOUS_MONTHS, those that are other words whatever the language around them (English
# "may", "march", the abbreviations, French "sept"): between a span's words of another language
# the rest are months ("vom 3. bis 9. Mai": German "Mai" is Italian "mai" only in Italian).
AMBIGUOUS_EVERYWHERE = frozenset(
    {"may", "march", "august", "april", "june", "sept", *MONTH_ABBREVIATIONS}
)
# Of AMBIGUOUS_MONTHS, another language's month word ("mars", "mai", "mayo", "maio", "marco",
# "julio", "janeiro": a planet, words and names in English): English time words do not make it
# a month, that language's own do ("le 3 mars", "Anfang Mai").
FOREIGN_AMBIGUOUS = AMBIGUOUS_MONTHS - AMBIGUOUS_EVERYWHERE
# Hyphen, en, em and figure dashes, non-breaking hyphen, minus sign, full-width hyphen-minus.
DASHES = "-–—‒‑−－"

# Each language's weekday names, Monday first (Portuguese "sexta-feira" is read as "sexta",
# "feira").
_WEEKDAY_NAMES = (
    "monday montag lundi lunes lunedi segunda",
    "tuesday dienstag mardi martes martedi terca",
    "wednesday mittwoch mercredi miercoles mercoledi quarta",
    "thursday donnerstag jeudi jueves giovedi quinta",
    "friday freitag vendredi viernes venerdi sexta",
    "saturday samstag samedi sabado sabato",
    "sunday sonntag dimanche domingo domenica",
)
WEEKDAY_NUMBERS = {name: n for n, names in enumerate(_WEEKDAY_NAMES) for name in names.split()}
ENGLISH_WEEKDAYS = [names.split()[0] for names in _WEEKDAY_NAMES]
WEEKDAYS = frozenset(WEEKDAY_NUMBERS)
# English abbreviations. Kept apart from WEEKDAYS, which make "sun may" a date: "mon", "sat",
# "sun" and "wed" are other words too.
ABBREVIATED = {
    "mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4,
    "sat": 5, "sun": 6,
}  # fmt: skip
# Those that are no other word: a day after "on" too ("what did I do on tues").
ONLY_DAYS = frozenset("tue tues thu thur thurs fri".split())
DAY_NUMBERS = {**WEEKDAY_NUMBERS, **ABBREVIATED}
# What may follow an abbreviation that is a day ("last fri", "last fri i shipped", "last sat
# morning"; "s" of "last fri's standup"); "when I last sat down" is no Saturday.
AFTER_ABBREVIATION = frozenset("i we and or at morning afternoon evening night s".split())
# Before "last": it is an adverb ("when I last sat down"), not the last one.
PRONOUNS = frozenset("i we you he she they it".split())

# Days named from today (French "hier" only in a French prompt, from_today._offset: German's
# "here").
RELATIVE = {
    "today": 0, "tonight": 0, "yesterday": -1, "tomorrow": 1, "heute": 0, "gestern": -1,
    "vorgestern": -2, "ubermorgen": 2, "aujourd": 0, "demain": 1, "hoy": 0, "ayer": -1,
    "anteayer": -2, "hoje": 0, "ontem": -1, "anteontem": -2, "amanha": 1, "oggi": 0, "ieri": -1,
    "domani": 1, "dopodomani": 2, "anoche": -1, "stamattina": 0, "stasera": 0,
}  # fmt: skip
# A part of a day said from today: "last night" is yesterday's, "this morning" today's (a day,
# not a topic: its notes answer "what did I note this morning?").
PARTS_OF_DAYS = {
    ("last", "night"): -1, ("letzte", "nacht"): -1, ("hier", "soir"): -1,
    ("this", "morning"): 0, ("this", "afternoon"): 0, ("this", "evening"): 0, ("ce", "matin"): 0,
    ("ce", "soir"): 0, ("esta", "manana"): 0, ("esta", "tarde"): 0, ("esta", "noche"): 0,
}  # fmt: skip
# A word before that moves the day one further: "the day before yesterday", "après-demain",
# "l'altro ieri", "pasado mañana", "avant-hier" (English only after "day": "before
# yesterday's deploy" is yesterday).
FURTHER = {
    ("before", "yesterday"): -1, ("after", "tomorrow"): 1, ("apres", "demain"): 1,
    ("altro", "ieri"): -1, ("pasado", "manana"): 2, ("avant", "hier"): -1,
}  # fmt: skip

# Which weekday, week or month a word beside it means: the last one before today, the next one
# after it, or this one (today included); as a number, also how many from this one. Before the
# name ("last friday", "letzte Woche", "el pasado viernes", "ce vendredi") or after it
# ("vendredi dernier", "venerdì scorso", "sexta-feira passada", "viernes que viene").
LAST, NEXT, THIS = -1, 1, 0
BEFORE = {
    **dict.fromkeys(
        """last past previous letzte letzten letzter letztes vergangene vergangenen vergangener
        vorige vorigen voriger pasado ultimo ultima""".split(),
        LAST,
    ),
    **dict.fromkeys(
        """next coming upcoming nachste nachsten nachster kommende kommenden kommender proximo
        proxima prossimo prossima""".split(),
        NEXT,
    ),
    **dict.fromkeys(
        "this diesen dieser diese ce cette esta este nesta neste questa questo".split(), THIS
    ),
    # "vorletzte Woche", "übernächsten Freitag": one further
    **dict.fromkeys("vorletzte vorletzten vorletzter vorletztes".split(), 2 * LAST),
    **dict.fromkeys("ubernachste ubernachsten ubernachster ubernachstes".split(), 2 * NEXT),
}
AFTER = {
    **dict.fromkeys(
        "dernier derniere passe passee pasado pasada passada passado scorso scorsa".split(), LAST
    ),
    **dict.fromkeys("prochain prochaine prossimo prossima proximo proxima".split(), NEXT),
}
COMING_AFTER = ("que", "viene")  # "el viernes que viene": two words

WEEK_WORDS = frozenset("week woche semaine semana settimana".split())
WEEKEND_WORDS = frozenset("weekend wochenende".split())  # its Saturday and Sunday
# "over the weekend", "am Wochenende", "übers Wochenende": which one the tense says.
OVER_THE_WEEKEND = frozenset("over on at during for".split())
OVER_WEEKEND = frozenset("am ubers".split())
MONTH_WORDS = frozenset("month monat mois mes mese".split())
# Spanish and Portuguese "mes" is French "my" ("mes passe-temps"): a month only after one of
# these ("el mes pasado", "o mês passado", "este mes").
MES_AFTER = frozenset(BEFORE) | frozenset("el o no do del al".split())

# A count of days, weeks or months back from today: "3 days ago", "two weeks ago", "vor 3
# Tagen", "il y a deux jours", "hace una semana", "há três dias", "tre giorni fa", "dos meses
# atrás". The days in each unit (a month is the month it falls in; 30 for "the past month").
UNIT_DAYS = {
    **dict.fromkeys("day days tag tage tagen jour jours dia dias giorno giorni".split(), 1),
    **dict.fromkeys(WEEK_WORDS | set("weeks wochen semaines semanas settimane".split()), 7),
    **dict.fromkeys(MONTH_WORDS | set("months monate monaten meses mesi".split()), 30),
}
AGO_AFTER = frozenset("ago fa atras".split())
AGO_BEFORE = frozenset("vor hace ha".split())  # and French "il y a"
IL_Y_A = ("il", "y", "a")
# After the unit these say "there are three days of delay" ("il y a 3 jours de retard", "ha due
# settimane di ritardo", Italian "il team ha una settimana per finire"), not "ago".
OF_WORDS = frozenset("de di d of per".split())
_COUNT_WORDS = (
    "a an one ein eine einem einer un une una uno um uma",
    "two zwei deux dos dois duas due couple",
    "three drei trois tres tre",
    "four vier quatre cuatro quatro quattro",
    "five funf cinq cinco cinque",
    "six sechs seis sei",
    "seven sieben sept siete sete sette",
    "eight acht huit ocho oito otto",
    "nine neun neuf nueve nove",
    "ten zehn dix diez dez dieci",
)
COUNTS = {word: n for n, names in enumerate(_COUNT_WORDS, 1) for word in names.split()}
# After "over the weekend" these say which one: "… of the 14th", "… in october", "… two weeks
# ago", "am Wochenende vor zwei Wochen", "… last month".
WHICH_WEEKEND = frozenset(
    ["of", "in", "before", "after", *COUNTS, *AGO_BEFORE, IL_Y_A[0], *BEFORE, *MONTHS]
)
# "a few days ago", "vor ein paar Tagen", "il y a quelques jours", "hace unos días", "qualche
# giorno fa": from FEW_UNITS[1] to FEW_UNITS[0] days (or weeks) back.
FEW = frozenset(
    """few several paar einigen wenigen quelques unos unas algunos algunas alguns algumas
    poucos poucas qualche""".split()
)
FEW_UNITS = (2, 5)
MOST_COUNTED = 99  # "100 days ago" is read as no day

# "since tuesday", "seit letzter Woche", "depuis lundi", "desde ayer": every day up to today,
# at most mentions.LONGEST_SPAN of them ("since 99 weeks ago" is that week alone).
SINCE = frozenset("since seit depuis desde".split())
# Before a count they say "for": "seit 3 Tagen", "depuis deux semaines" (the days up to today).
SINCE_COUNTED = frozenset("seit depuis".split())
# "from the 9th of last month to today": a span up to today.
TODAY_WORDS = frozenset("today now heute aujourd hoy hoje oggi".split())
# Words of a conversation with the assistant: "summarize what we did today" is the session.
WE = frozenset("we us our wir".split())
# Portuguese weekday names that are also ordinals ("la segunda pasada": the second pass): a day
# only as "segunda-feira" or after a word that puts it in time ("na sexta").
ORDINAL_NAMES = frozenset("segunda terca quarta quinta sexta".split())
PORTUGUESE_ON = frozenset("na nesta proxima ultima".split())
# A weekday after one of these is a day the prompt names when its tense says which one: "what
# did I do on friday" (the last), "what's planned on friday" (the next), "¿qué hice el viernes?",
# "was habe ich am Freitag gemacht". French "le vendredi" is every Friday, and is left out.
ON = frozenset("on from am el na".split())
PAST = frozenset(
    """did was were had happened went wrote noted met said decided discussed talked bought
    worked fixed finished started sent called habe hatte war waren gemacht passiert etait fait
    hice hizo paso fue hecho fiz fez aconteceu foi fatto successo""".split()
)
COMING = frozenset(
    "will planned scheduled upcoming agenda wird werde geplant prevu ansteht anstehen".split()
)
# German verbs whose particle ends the sentence: "was steht am Freitag an?", "was habe ich am
# Montag vor?" (what is coming).
COMING_SEPARATED = {
    "an": frozenset("steht stehen".split()),
    "vor": frozenset("habe hast haben".split()),
}
# Times of day ("what did I do yesterday morning"; German "Morgen" and Spanish "mañana" are
# also "tomorrow", and left out).
_TIMES_OF_DAY = frozenset(
    """morning afternoon evening night noon midnight vormittag nachmittag abend nacht mittag
    matin soir soiree nuit midi tarde noche madrugada manha noite mattina pomeriggio sera
    notte""".split()
)
# Words that say when what is asked about happens, and no topic: a day's notes need not hold
# them (dates.asking_terms). Not every past tense: "who called me in on the 3rd" asks who
# called, and the note that says so answers.
WHEN_WORDS = (
    COMING
    | _TIMES_OF_DAY
    | frozenset(COMING_SEPARATED).union(*COMING_SEPARATED.values())
    | frozenset(("war", "waren"))  # "was war am Mittwoch?"
)
# After "was", English's past ("what was on friday"), not German's "what" ("was steht an").
AFTER_WAS = frozenset("i it there we he she the on my that this a in at".split())
