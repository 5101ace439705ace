; Inno Setup recipe for the Windows bundle (see packaging/README.md). Built by the bundles
; workflow after PyInstaller, from the folder dist\pi-desktop:
;
;   iscc /DAppVersion=0.1.0 /DSourceDir=%CD%\dist\pi-desktop /DOutputDir=%CD%\dist packaging\windows\pi-desktop.iss
;
; (Relative paths are taken from this file's folder, hence the absolute ones above.)
; Per-user install (no administrator rights), Start menu entry, and "Open with" for JSON Lines
; files: Pi Desktop is offered for .jsonl files but never made their default application,
; because Windows cannot tell a Pi Desktop session from any other JSON Lines file by name.

#ifndef AppVersion
  #error Pass the package version: /DAppVersion=X.Y.Z
#endif
#ifndef SourceDir
  #define SourceDir "..\..\dist\pi-desktop"
#endif
#ifndef OutputDir
  #define OutputDir "..\..\dist"
#endif

#define AppName "Pi Desktop"
#define AppId "io.github.pidesktop.PiDesktop"
#define ExeName "pi-desktop.exe"
#define ProgId "PiDesktop.Session"

[Setup]
AppId={#AppId}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=Pi Desktop contributors
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
OutputDir={#OutputDir}
OutputBaseFilename=pi-desktop-{#AppVersion}-setup
SetupIconFile=..\icons\pi-desktop.ico
UninstallDisplayIcon={app}\{#ExeName}
Compression=lzma2
SolidCompression=yes
WizardStyle=modern
ChangesAssociations=yes

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: recursesubdirs createallsubdirs ignoreversion

[Icons]
Name: "{group}\{#AppName}"; Filename: "{app}\{#ExeName}"
Name: "{group}\Uninstall {#AppName}"; Filename: "{uninstallexe}"

[Registry]
; The ProgId that opens a session in Pi Desktop.
Root: HKA; Subkey: "Software\Classes\{#ProgId}"; ValueType: string; ValueName: ""; ValueData: "{#AppName} session"; Flags: uninsdeletekey
Root: HKA; Subkey: "Software\Classes\{#ProgId}\DefaultIcon"; ValueType: string; ValueName: ""; ValueData: "{app}\{#ExeName},0"
Root: HKA; Subkey: "Software\Classes\{#ProgId}\shell\open\command"; ValueType: string; ValueName: ""; ValueData: """{app}\{#ExeName}"" ""%1"""
; Offered under "Open with" for .jsonl, without taking over the extension's default.
Root: HKA; Subkey: "Software\Classes\.jsonl\OpenWithProgids"; ValueType: string; ValueName: "{#ProgId}"; ValueData: ""; Flags: uninsdeletevalue
Root: HKA; Subkey: "Software\Classes\Applications\{#ExeName}\SupportedTypes"; ValueType: string; ValueName: ".jsonl"; ValueData: ""; Flags: uninsdeletekey

[Run]
Filename: "{app}\{#ExeName}"; Description: "Start {#AppName}"; Flags: nowait postinstall skipifsilent
