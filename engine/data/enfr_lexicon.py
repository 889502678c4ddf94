"""Lexicon tables for the English→French grammar (engine/data/enfr.py).

Compact "english:french[:extra]" entries, expanded by the functions at the bottom.
French nouns never start with an aspirated h, so elision before a vowel or h is regular.

- THINGS / PEOPLE: ``en:fr:gender[:en_plural[:fr_plural]]`` (default plurals are regular)
- ADJECTIVES: ``en:fr[/feminine][:pre]`` (``pre`` = placed before the noun in French)
- VERBS: ``en:fr_infinitive[:past[:participle]]``; the French verbs are all regular -er
  verbs, so present, participle and future follow from the stem
"""

from __future__ import annotations

THINGS = """
agreement:accord:m area:zone:f treaty:traité:m law:loi:f report:rapport:m decision:décision:f
proposal:proposition:f budget:budget:m plan:plan:m project:projet:m programme:programme:m
contract:contrat:m document:document:m letter:lettre:f book:livre:m
newspaper:journal:m:newspapers:journaux article:article:m question:question:f answer:réponse:f
problem:problème:m solution:solution:f policy:politique:f reform:réforme:f strategy:stratégie:f
market:marché:m company:entreprise:f bank:banque:f school:école:f university:université:f
hospital:hôpital:m:hospitals:hôpitaux museum:musée:m library:bibliothèque:f station:gare:f
airport:aéroport:m bridge:pont:m road:route:f street:rue:f village:village:m
country:pays:m:countries:pays region:région:f house:maison:f building:bâtiment:m door:porte:f
window:fenêtre:f table:table:f chair:chaise:f car:voiture:f train:train:m
boat:bateau:m:boats:bateaux plane:avion:m bicycle:vélo:m computer:ordinateur:m
phone:téléphone:m machine:machine:f engine:moteur:m tool:outil:m key:clé:f box:boîte:f
bag:sac:m picture:tableau:m:pictures:tableaux photo:photo:f film:film:m song:chanson:f
story:histoire:f game:jeu:m:games:jeux idea:idée:f system:système:m
network:réseau:m:networks:réseaux service:service:m product:produit:m price:prix:m:prices:prix
tax:impôt:m salary:salaire:m account:compte:m bill:facture:f loan:prêt:m debt:dette:f
meeting:réunion:f conference:conférence:f election:élection:f campaign:campagne:f party:parti:m
government:gouvernement:m parliament:parlement:m committee:comité:m council:conseil:m
court:tribunal:m:courts:tribunaux army:armée:f border:frontière:f union:union:f
community:communauté:f convention:convention:f declaration:déclaration:f
constitution:constitution:f rule:règle:f regulation:règlement:m directive:directive:f
text:texte:m list:liste:f map:carte:f page:page:f chapter:chapitre:m message:message:m
file:dossier:m register:registre:m request:demande:f offer:offre:f sale:vente:f
purchase:achat:m investment:investissement:m industry:industrie:f factory:usine:f farm:ferme:f
field:champ:m forest:forêt:f river:rivière:f lake:lac:m mountain:montagne:f island:île:f
garden:jardin:m park:parc:m beach:plage:f tree:arbre:m flower:fleur:f
animal:animal:m:animals:animaux horse:cheval:m:horses:chevaux dog:chien:m cat:chat:m
bird:oiseau:m:birds:oiseaux apple:pomme:f cake:gâteau:m:cakes:gâteaux meal:repas:m:meals:repas
dish:plat:m bottle:bouteille:f glass:verre:m cup:tasse:f plate:assiette:f
knife:couteau:m:knives:couteaux shirt:chemise:f dress:robe:f shoe:chaussure:f
hat:chapeau:m:hats:chapeaux coat:manteau:m:coats:manteaux watch:montre:f ring:bague:f
gift:cadeau:m:gifts:cadeaux ticket:billet:m seat:siège:m bedroom:chambre:f room:salle:f
office:bureau:m:offices:bureaux kitchen:cuisine:f wall:mur:m roof:toit:m garage:garage:m
shop:magasin:m restaurant:restaurant:m hotel:hôtel:m church:église:f
castle:château:m:castles:châteaux tower:tour:f port:port:m ship:navire:m truck:camion:m
bus:bus:m:buses:bus wheel:roue:f model:modèle:m method:méthode:f theory:théorie:f
experiment:expérience:f result:résultat:m study:étude:f survey:enquête:f
analysis:analyse:f:analyses:analyses exam:examen:m lesson:leçon:f course:cours:m:courses:cours
class:classe:f subject:sujet:m language:langue:f word:mot:m sentence:phrase:f
translation:traduction:f dictionary:dictionnaire:m novel:roman:m poem:poème:m
painting:peinture:f statue:statue:f concert:concert:m festival:festival:m
exhibition:exposition:f competition:concours:m:competitions:concours team:équipe:f
ball:ballon:m award:récompense:f medal:médaille:f trip:voyage:m journey:trajet:m
invitation:invitation:f wedding:mariage:m birthday:anniversaire:m
package:colis:m:packages:colis weapon:arme:f mission:mission:f operation:opération:f
crisis:crise:f:crises:crises war:guerre:f conflict:conflit:m defence:défense:f risk:risque:m
danger:danger:m accident:accident:m storm:tempête:f flood:inondation:f disease:maladie:f
medicine:médicament:m vaccine:vaccin:m treatment:traitement:m sample:échantillon:m
cell:cellule:f gene:gène:m protein:protéine:f molecule:molécule:f planet:planète:f
star:étoile:f satellite:satellite:m rocket:fusée:f telescope:télescope:m camera:caméra:f
screen:écran:m keyboard:clavier:m printer:imprimante:f cable:câble:m battery:batterie:f
lamp:lampe:f clock:horloge:f mirror:miroir:m bed:lit:m sofa:canapé:m
carpet:tapis:m:carpets:tapis curtain:rideau:m:curtains:rideaux blanket:couverture:f
pillow:oreiller:m towel:serviette:f soap:savon:m bucket:seau:m:buckets:seaux basket:panier:m
envelope:enveloppe:f stamp:timbre:m note:note:f receipt:reçu:m licence:permis:m:licences:permis
passport:passeport:m visa:visa:m form:formulaire:m signature:signature:f stadium:stade:m
theatre:théâtre:m cinema:cinéma:m gallery:galerie:f tunnel:tunnel:m canal:canal:m:canals:canaux
dam:barrage:m motorway:autoroute:f square:place:f monument:monument:m
palace:palais:m:palaces:palais prison:prison:f embassy:ambassade:f ministry:ministère:m
agency:agence:f institute:institut:m foundation:fondation:f association:association:f
organisation:organisation:f federation:fédération:f alliance:alliance:f coalition:coalition:f
majority:majorité:f minority:minorité:f opposition:opposition:f resolution:résolution:f
amendment:amendement:m clause:clause:f principle:principe:m objective:objectif:m
target:cible:f priority:priorité:f initiative:initiative:f measure:mesure:f standard:norme:f
procedure:procédure:f process:processus:m:processes:processus export:exportation:f
tariff:tarif:m currency:monnaie:f economy:économie:f sector:secteur:m energy:énergie:f
resource:ressource:f reserve:réserve:f pension:pension:f benefit:allocation:f
insurance:assurance:f grant:subvention:f fund:fonds:m:funds:fonds payment:paiement:m
transfer:virement:m deposit:dépôt:m estimate:estimation:f forecast:prévision:f figure:chiffre:m
chart:graphique:m website:site:m application:application:f platform:plateforme:f
device:appareil:m sensor:capteur:m robot:robot:m drone:drone:m vehicle:véhicule:m lane:voie:f
path:chemin:m gate:portail:m fence:clôture:f hill:colline:f valley:vallée:f desert:désert:m
coast:côte:f ocean:océan:m glacier:glacier:m volcano:volcan:m cave:grotte:f rock:rocher:m
stone:pierre:f umbrella:parapluie:m
"""

PEOPLE = """
minister:ministre:m president:président:m director:directeur:m teacher:professeur:m
student:étudiant:m doctor:médecin:m nurse:infirmière:f lawyer:avocat:m judge:juge:m
journalist:journaliste:m engineer:ingénieur:m scientist:scientifique:m researcher:chercheur:m
artist:artiste:m writer:écrivain:m painter:peintre:m singer:chanteuse:f actor:acteur:m
actress:actrice:f farmer:agriculteur:m worker:ouvrier:m manager:gérant:m customer:client:m
neighbour:voisin:m friend:ami:m child:enfant:m:children:enfants woman:femme:f:women:femmes
man:homme:m:men:hommes girl:fille:f boy:garçon:m king:roi:m queen:reine:f soldier:soldat:m
officer:officier:m diplomat:diplomate:m ambassador:ambassadeur:m delegate:délégué:m
mayor:maire:m senator:sénateur:m deputy:député:m citizen:citoyen:m voter:électeur:m
member:membre:m leader:dirigeant:m expert:expert:m adviser:conseiller:m secretary:secrétaire:m
chancellor:chancelier:m prince:prince:m princess:princesse:f pilot:pilote:m driver:chauffeur:m
baker:boulanger:m architect:architecte:m banker:banquier:m merchant:marchand:m
tourist:touriste:m visitor:visiteur:m author:auteur:m editor:éditeur:m reader:lecteur:m
player:joueur:m coach:entraîneur:m captain:capitaine:m sailor:marin:m pupil:élève:m
mother:mère:f father:père:m sister:sœur:f brother:frère:m uncle:oncle:m aunt:tante:f
cousin:cousin:m wife:épouse:f:wives:épouses husband:mari:m nephew:neveu:m:nephews:neveux
niece:nièce:f son:fils:m:sons:fils guest:invité:m owner:propriétaire:m tenant:locataire:m
candidate:candidat:m winner:gagnant:m champion:champion:m negotiator:négociateur:m
economist:économiste:m historian:historien:m philosopher:philosophe:m poet:poète:m
musician:musicien:m dancer:danseuse:f photographer:photographe:m programmer:programmeur:m
accountant:comptable:m clerk:employé:m employer:employeur:m inspector:inspecteur:m
detective:détective:m thief:voleur:m:thieves:voleurs witness:témoin:m:witnesses:témoins
victim:victime:f prisoner:prisonnier:m refugee:réfugié:m volunteer:bénévole:m
surgeon:chirurgien:m dentist:dentiste:m pharmacist:pharmacien:m patient:patient:m
"""

NAMES = """
alice anna bob charles claire david emma eric julia thomas laura martin nina oscar olga robert
sarah simon victor zoe hugo lucas louis anne emily oliver sophia james isabel daniel helen
marco elena ivan irene paul peter maria clara leon edgar ella igor otto ursula adam eva
"""

CITIES = """
paris:paris london:londres berlin:berlin rome:rome madrid:madrid brussels:bruxelles
geneva:genève vienna:vienne lisbon:lisbonne athens:athènes warsaw:varsovie prague:prague
moscow:moscou venice:venise florence:florence naples:naples munich:munich cologne:cologne
amsterdam:amsterdam copenhagen:copenhague stockholm:stockholm oslo:oslo helsinki:helsinki
dublin:dublin edinburgh:édimbourg montreal:montréal tokyo:tokyo beijing:pékin algiers:alger
tunis:tunis dakar:dakar marseille:marseille lyon:lyon bordeaux:bordeaux strasbourg:strasbourg
luxembourg:luxembourg antwerp:anvers
"""

ADJECTIVES = """
economic:économique european:européen important:important political:politique social:social
national:national international:international public:public/publique financial:financier
commercial:commercial legal:juridique military:militaire cultural:culturel
historical:historique scientific:scientifique technical:technique industrial:industriel
agricultural:agricole regional:régional local:local federal:fédéral central:central
general:général special:spécial annual:annuel monthly:mensuel daily:quotidien modern:moderne
ancient:ancien classical:classique popular:populaire famous:célèbre rich:riche poor:pauvre
difficult:difficile easy:facile simple:simple complex:complexe red:rouge blue:bleu green:vert
black:noir white:blanc/blanche yellow:jaune grey:gris/grise pink:rose purple:violet/violette
dark:sombre bright:lumineux heavy:lourd light:léger expensive:cher free:gratuit
long:long/longue:pre short:court wide:large narrow:étroit deep:profond strong:fort weak:faible
fast:rapide slow:lent quiet:calme noisy:bruyant empty:vide full:plein open:ouvert
secret:secret/secrète broken:cassé main:principal major:majeur minor:mineur recent:récent
current:actuel future:futur previous:précédent last:dernier:pre first:premier:pre
young:jeune:pre small:petit:pre big:grand:pre good:bon:pre bad:mauvais:pre pretty:joli:pre
happy:heureux sad:triste angry:fâché tired:fatigué sick:malade healthy:sain ugly:laid
strange:étrange normal:normal natural:naturel human:humain medical:médical chemical:chimique
physical:physique digital:numérique electric:électrique electronic:électronique
mechanical:mécanique nuclear:nucléaire solar:solaire environmental:environnemental
urban:urbain rural:rural coastal:côtier french:français german:allemand italian:italien
spanish:espagnol british:britannique american:américain russian:russe chinese:chinois
japanese:japonais greek:grec/grecque polish:polonais dutch:néerlandais swedish:suédois
belgian:belge swiss:suisse irish:irlandais portuguese:portugais austrian:autrichien
canadian:canadien african:africain asian:asiatique english:anglais useful:utile
useless:inutile necessary:nécessaire possible:possible impossible:impossible
available:disponible responsible:responsable independent:indépendant democratic:démocratique
liberal:libéral conservative:conservateur/conservatrice radical:radical moderate:modéré
serious:sérieux dangerous:dangereux curious:curieux generous:généreux nervous:nerveux
careful:prudent honest:honnête polite:poli rude:impoli brave:courageux lazy:paresseux
busy:occupé private:privé personal:personnel professional:professionnel educational:éducatif
active:actif passive:passif positive:positif negative:négatif effective:efficace
competitive:compétitif creative:créatif fiscal:fiscal monetary:monétaire
budgetary:budgétaire strategic:stratégique diplomatic:diplomatique
parliamentary:parlementaire presidential:présidentiel ministerial:ministériel
constitutional:constitutionnel judicial:judiciaire criminal:criminel civil:civil
foreign:étranger domestic:intérieur external:extérieur internal:interne global:mondial
total:total partial:partiel temporary:temporaire permanent:permanent unique:unique rare:rare
common:commun typical:typique basic:fondamental essential:essentiel crucial:crucial
vital:vital complete:complet/complète correct:correct warm:chaud cold:froid dry:sec/sèche
wet:mouillé fresh:frais/fraîche sweet:sucré salty:salé bitter:amer soft:doux/douce hard:dur
round:rond flat:plat sharp:tranchant thick:épais/épaisse thin:mince huge:énorme
tiny:minuscule economical:économe official:officiel
"""

VERBS = """
sign:signer approve:approuver accept:accepter adopt:adopter examine:examiner
present:présenter prepare:préparer like:aimer find:trouver:found
leave:quitter:left carry:porter publish:publier modify:modifier
control:contrôler:controlled criticize:critiquer refuse:refuser confirm:confirmer
announce:annoncer cancel:annuler:cancelled organize:organiser discuss:discuter
analyse:analyser revise:réviser check:vérifier finance:financer design:dessiner close:fermer
lock:verrouiller borrow:emprunter bring:apporter:brought keep:garder:kept save:sauver
explain:expliquer help:aider invite:inviter thank:remercier develop:développer
improve:améliorer change:changer replace:remplacer repair:réparer wash:laver
eat:manger:ate:eaten taste:goûter forget:oublier:forgot:forgotten steal:voler:stole:stolen
show:montrer:showed:shown hide:cacher:hid:hidden win:gagner:won sing:chanter:sang:sung
admire:admirer appreciate:apprécier observe:observer respect:respecter ignore:ignorer
denounce:dénoncer condemn:condamner inspect:inspecter evaluate:évaluer calculate:calculer
count:compter transform:transformer transport:transporter deliver:livrer install:installer
launch:lancer postpone:reporter abandon:abandonner block:bloquer authorize:autoriser
propose:proposer recommend:recommander claim:réclamer negotiate:négocier ratify:ratifier
amend:amender draft:rédiger implement:appliquer accuse:accuser arrest:arrêter
occupy:occuper explore:explorer locate:localiser identify:identifier classify:classer
collect:rassembler share:partager combine:combiner compare:comparer select:sélectionner
rent:louer hire:engager educate:éduquer inform:informer alert:alerter amuse:amuser
interest:intéresser fascinate:fasciner shock:choquer impress:impressionner
reassure:rassurer encourage:encourager motivate:motiver consult:consulter contact:contacter
guide:guider accompany:accompagner restore:restaurer renovate:rénover decorate:décorer
print:imprimer copy:copier download:télécharger delete:supprimer create:créer visit:visiter
"""

NUMBERS = """
two:deux three:trois four:quatre five:cinq six:six seven:sept eight:huit nine:neuf ten:dix
eleven:onze twelve:douze thirteen:treize fourteen:quatorze fifteen:quinze sixteen:seize
twenty:vingt thirty:trente forty:quarante fifty:cinquante sixty:soixante
"""

MONTHS = """
january:janvier february:février march:mars april:avril may:mai june:juin july:juillet
august:août september:septembre october:octobre november:novembre december:décembre
"""

# English words starting with a vowel letter but a consonant sound take "a", not "an".
A_NOT_AN = frozenset("european university union unique useful useless usual one".split())


def pairs(table: str) -> list[list[str]]:
    """Split a table into its entries, each a list of ':'-separated fields."""
    return [entry.split(":") for entry in table.split()]


def english_plural(word: str) -> str:
    if word.endswith(("s", "sh", "ch", "x", "z")):
        return word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


def french_plural(word: str) -> str:
    if word.endswith(("s", "x", "z")):
        return word
    if word.endswith("al"):
        return word[:-2] + "aux"
    if word.endswith(("eau", "eu")):
        return word + "x"
    return word + "s"


def french_feminine(word: str) -> str:
    for masc, fem in (
        ("eux", "euse"),
        ("if", "ive"),
        ("el", "elle"),
        ("ien", "ienne"),
        ("éen", "éenne"),
        ("on", "onne"),
        ("er", "ère"),
        ("eur", "euse"),
    ):
        if word.endswith(masc):
            return word[: -len(masc)] + fem
    return word if word.endswith("e") else word + "e"


def english_verb_forms(base: str) -> tuple[str, str]:
    """(third person singular, regular past) of an English verb."""
    third = english_plural(base) if not base.endswith("o") else base + "es"
    if base.endswith("e"):
        past = base + "d"
    elif base.endswith("y") and base[-2] not in "aeiou":
        past = base[:-1] + "ied"
    else:
        past = base + "ed"
    return third, past
